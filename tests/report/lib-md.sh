# Helpers for the report tests (sourced after tests/e2e/lib.sh).
#
# md_html FILE.md: the HTML cmark-gfm makes of it (tables extension on),
# wrapped so xmllint can read it as a document.
md_html() {
	{ printf '<html><body>\n'; cmark-gfm --unsafe -e table "$1"; printf '</body></html>\n'; } > "$1.html"
}
# xq FILE.html XPATH: a number from xmllint.
xq() { xmllint --html --xpath "$2" "$1" 2>/dev/null; }
# check_tables FILE.md: every table has a header row and every body row
# has as many cells as the header (GitHub drops nothing silently).
check_tables() {
	md_html "$1"
	_h=$1.html
	_n=$(xq "$_h" 'count(//table)')
	_i=1
	while [ "$_i" -le "$_n" ]; do
		_c=$(xq "$_h" "count((//table)[$_i]/thead/tr/th)")
		_bad=$(xq "$_h" "count((//table)[$_i]/tbody/tr[count(td) != $_c])")
		[ "$_c" -ge 2 ] || { say "table $_i: $_c header cells"; return 1; }
		[ "$_bad" = 0 ] || { say "table $_i: $_bad rows without $_c cells"; return 1; }
		_i=$((_i + 1))
	done
	return 0
}
# columns FILE.md N: the number of columns of the N-th table.
columns() { xq "$1.html" "count((//table)[$2]/thead/tr/th)"; }
rows() { xq "$1.html" "count((//table)[$2]/tbody/tr)"; }
tables() { xq "$1.html" 'count(//table)'; }
# table_with FILE.md HEADER: the index of the first table whose first header cell is HEADER.
table_with() {
	_n=$(tables "$1"); _i=1
	while [ "$_i" -le "$_n" ]; do
		[ "$(xq "$1.html" "string((//table)[$_i]/thead/tr/th[1])")" = "$2" ] && { echo "$_i"; return 0; }
		_i=$((_i + 1))
	done
	echo 0
}
require_md_tools() {
	command -v cmark-gfm >/dev/null 2>&1 || skip "cmark-gfm is missing (bootstrap.sh installs it)"
	command -v xmllint >/dev/null 2>&1 || skip "xmllint is missing (libxml2-utils)"
}
