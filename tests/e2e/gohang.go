// A Go program for tests/e2e/trace-goroutines.sh (issue 32): its
// goroutines wait where the test says, its OS threads as Go's always do
// (futexes, the netpoller in epoll).
//
//	gohang hung   holdAndWait takes mu and waits on a channel nobody sends
//	              on; 5 workers block in mu.Lock(); main waits in Accept on
//	              a listener (so the runtime's deadlock check never fires).
//	              Truth: hang-blocked, the goroutines named.
//	gohang rest   3 workers wait for jobs on a channel, main in Accept.
//	              Truth: idle.
package main

import (
	"net"
	"os"
	"sync"
	"time"
)

var mu sync.Mutex

func holdAndWait(never chan int) {
	mu.Lock()
	defer mu.Unlock()
	<-never
}

func worker(jobs chan int) {
	for j := range jobs {
		mu.Lock()
		_ = j
		mu.Unlock()
	}
}

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(1)
	}
	jobs := make(chan int)
	if len(os.Args) > 1 && os.Args[1] == "hung" {
		go holdAndWait(make(chan int))
		time.Sleep(100 * time.Millisecond)
		for i := 0; i < 5; i++ {
			go func() {
				mu.Lock()
				mu.Unlock()
			}()
		}
	} else {
		for i := 0; i < 3; i++ {
			go worker(jobs)
		}
	}
	for {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
	}
}
