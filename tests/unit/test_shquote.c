/* shquote.c: command lines as shell words (issue 20).  Each form is
 * checked as text, and every case is pasted back into a real shell
 * (bash, which reads $'...'), whose argv must be the original bytes. */
#include "config.h"
#include "unit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shquote.h"
#include "strbuf.h"

static void quoted_is(const char *arg, size_t len, const char *want)
{
	struct strbuf sb = STRBUF_INIT;
	gp_shquote_word(&sb, arg, len);
	if (strcmp(sb.buf, want))
		fail_msg("quoted as [%s], want [%s]", sb.buf, want);
	strbuf_release(&sb);
}
#define QUOTED(lit, want) quoted_is(lit, sizeof lit - 1, want)

static void test_forms(void **st UNUSED)
{
	QUOTED("make", "make");
	QUOTED("-j4", "-j4");
	QUOTED("/usr/bin/xz", "/usr/bin/xz");
	QUOTED("CC=gcc", "CC=gcc");
	QUOTED("a,b:c+d@e%f", "a,b:c+d@e%f");
	QUOTED("", "''");
	QUOTED("two words", "'two words'");
	QUOTED("it's", "'it'\\''s'");
	QUOTED("'", "''\\'''");
	QUOTED("$HOME", "'$HOME'");
	QUOTED("a;b|c&d>e<f", "'a;b|c&d>e<f'");
	QUOTED("*.c", "'*.c'");
	QUOTED("`id`", "'`id`'");
	QUOTED("~", "'~'");
	QUOTED("#x", "'#x'");
	QUOTED("back\\slash", "'back\\slash'");
	QUOTED("caf\xc3\xa9", "'caf\xc3\xa9'");         /* UTF-8 text: single quotes, as it is */
	QUOTED("a\nb", "$'a\\nb'");
	QUOTED("tab\there", "$'tab\\there'");
	QUOTED("cr\r", "$'cr\\r'");
	QUOTED("esc\x1b[31m", "$'esc\\x1b[31m'");
	QUOTED("del\x7f", "$'del\\x7f'");
	QUOTED("it's\n", "$'it\\'s\\n'");
	QUOTED("b\\s\n", "$'b\\\\s\\n'");
	QUOTED("\xff\xfe", "$'\\xff\\xfe'");             /* not UTF-8 */
	QUOTED("caf\xe9", "$'caf\\xe9'");                /* Latin-1 */
	QUOTED("\xc3\xa9\xff", "$'\xc3\xa9\\xff'");      /* a character kept beside a stray byte */
	QUOTED("\xc0\xaf", "$'\\xc0\\xaf'");             /* overlong '/' */
	QUOTED("\xed\xa0\x80", "$'\\xed\\xa0\\x80'");    /* a surrogate */
	QUOTED("\xc2\x85", "$'\\xc2\\x85'");             /* C1 NEL */
	QUOTED("\xe2\x82", "$'\\xe2\\x82'");             /* cut short */
}

static void test_argv(void **st UNUSED)
{
	const char *const argv[] = { "sh", "-c", "exec xz -T1 <\"$0\" >/dev/null", "", NULL };
	struct strbuf sb = STRBUF_INIT;
	gp_shquote_argv(&sb, argv, 4);
	assert_string_equal(sb.buf, "sh -c 'exec xz -T1 <\"$0\" >/dev/null' ''");
	strbuf_reset(&sb);
	gp_shquote_argv(&sb, argv, 0);
	assert_string_equal(sb.buf, "");
	strbuf_release(&sb);
}

/* bash -c 'printf "%s\0" WORDS' prints the argv the quoted words give. */
static void round_trip(const char *const *args, size_t n)
{
	if (access("/bin/bash", X_OK))
		skip();
	struct strbuf cmd = STRBUF_INIT;
	strbuf_addstr(&cmd, "printf '%s\\0' ");
	gp_shquote_argv(&cmd, args, n);
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl("/bin/bash", "bash", "-c", cmd.buf, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char out[4096];
	size_t got = 0;
	ssize_t r;
	while (got < sizeof out && (r = read(fd[0], out + got, sizeof out - got)) > 0)
		got += (size_t)r;
	close(fd[0]);
	int status;
	waitpid(pid, &status, 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(args[i]);
		if (at + len + 1 > got || memcmp(out + at, args[i], len + 1))
			fail_msg("argument %zu did not come back from bash -c %s", i, cmd.buf);
		at += len + 1;
	}
	assert_int_equal(at, got);
	strbuf_release(&cmd);
}

static void test_bash_round_trip(void **st UNUSED)
{
	const char *const args[] = { "plain", "", "two words", "it's", "'", "\"dq\"", "$HOME",
		"`id`", "a;b|c&d", "*", "~", "#c", "back\\slash", "a\nb", "tab\t", "cr\r",
		"esc\x1b[0m", "del\x7f", "it's\n", "b\\s\n", "\xff\xfe", "caf\xe9", "caf\xc3\xa9",
		"\xc3\xa9\xff", "\xc2\x85", "\xe2\x82", "x\\x41", "!bang", "{a,b}", "[ab]",
		"trailing ", " leading", "=", "-", "--" };
	round_trip(args, sizeof args / sizeof args[0]);
}

UNIT_MAIN(
	cmocka_unit_test(test_forms),
	cmocka_unit_test(test_argv),
	cmocka_unit_test(test_bash_round_trip))
