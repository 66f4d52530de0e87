// A Go HTTP server, and a Go client that retries (issue 32, rows 5, 9, 11).
//
//	goserver idle          net/http at rest, no client.  Truth: idle (the
//	                       goroutines park in the netpoller and on the runtime's
//	                       timers; sysmon, the GC workers and the idle Ms are the
//	                       runtime at rest, whichever OS thread runs the netpoller).
//	goserver answer        the server and its load generator (a child process:
//	                       `goserver client PORT`, a request every 0.5 s).
//	                       Truth: progress.
//	goserver hung          the same load; at +2 s the goroutine reloadModel takes
//	                       the server's mutex and waits on a channel nobody ever
//	                       sends on; every handler then blocks in mu.Lock() while
//	                       clients keep connecting.  Truth: a hang (hang-blocked);
//	                       the goroutines waiting are out of the OS's sight: the
//	                       verdict says so plainly, or names them (mutex, channel,
//	                       reloadModel) from the runtime's memory.
//	goserver retry         a client that dials a port nobody listens on (bound,
//	                       never listened), refused, every second, for ever,
//	                       printing nothing.  Truth: a hang that is retrying
//	                       ("connect to 127.0.0.1:PORT refused N times").
//	goserver client PORT   the load generator alone.
//	goserver MODE PORTFILE (answer or hung) the server alone, its port written
//	                       to PORTFILE, no load generator of its own (a hook
//	                       starts `goserver client PORT` outside the tree).
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

var mu sync.Mutex

func reloadModel(weights chan []byte) {
	mu.Lock()
	defer mu.Unlock()
	<-weights // nobody ever sends
}

func loadgen(port string) {
	for i := 0; ; i++ {
		go func(i int) {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%s/generate?i=%d", port, i))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}(i)
		time.Sleep(500 * time.Millisecond)
	}
}

func retry() {
	hold, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		os.Exit(1)
	}
	if err := syscall.Bind(hold, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		os.Exit(1)
	}
	sa, _ := syscall.Getsockname(hold)
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(time.Second)
	}
}

func main() {
	mode := "idle"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "client":
		loadgen(os.Args[2])
	case "retry":
		retry()
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body := make([]byte, 1000)
		mu.Unlock()
		w.Write(body)
	})
	if len(os.Args) > 2 {
		if err := os.WriteFile(os.Args[2]+".tmp", []byte(port+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Rename(os.Args[2]+".tmp", os.Args[2])
	} else if mode != "idle" {
		self, _ := os.Executable()
		cmd := exec.Command(self, "client", port)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if mode == "hung" {
		go func() {
			time.Sleep(2 * time.Second)
			reloadModel(make(chan []byte))
		}()
	}
	http.Serve(ln, nil)
}
