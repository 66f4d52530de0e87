// A Go program that breaks its own runtime's list of goroutines, for
// tests/e2e/stacks-go-hostile.sh: whatever a target's memory holds, the
// goroutine reader (src/tracer/goroutines.c) reads it bounded and never
// trusts it.  The GC is off: it would walk the broken list itself.
//
//	gohostile len    runtime.allgs claims 2^40 goroutines
//	gohostile ptrs   runtime.allgs holds nil, 0x1, an unmapped address,
//	                 and two "goroutines" in an array of words that all
//	                 point back into it (stack bounds, frame pointers and
//	                 pcs that loop), then the real main goroutine
//
// It needs //go:linkname to a runtime variable (go1.23 refuses it: the
// test skips).
package main

import (
	"os"
	"runtime/debug"
	"time"
	"unsafe"
)

//go:linkname allgs runtime.allgs
var allgs []unsafe.Pointer

var junk [4096]uintptr
var fake []unsafe.Pointer

func main() {
	debug.SetGCPercent(-1)
	switch os.Args[1] {
	case "len":
		hdr := (*[3]uintptr)(unsafe.Pointer(&allgs))
		hdr[1] = 1 << 40
		hdr[2] = 1 << 40
	case "ptrs":
		self := uintptr(unsafe.Pointer(&junk[0]))
		for i := range junk {
			junk[i] = self + uintptr(i%4)*8
		}
		// go1.19 amd64's runtime.g, where the reader finds it in DWARF:
		// stack.hi at 8, sched.bp at 104, atomicstatus at 144.  A
		// goroutine "waiting" whose frame pointer points at itself.
		junk[1] = self + uintptr(len(junk))*8
		junk[13] = self + 40*8
		junk[18] = 4
		junk[40] = self + 40*8
		fake = []unsafe.Pointer{nil, unsafe.Pointer(uintptr(1)), unsafe.Pointer(uintptr(0xdeadbeef000)),
			unsafe.Pointer(&junk[0]), unsafe.Pointer(&junk[100]), allgs[0]}
		hdr := (*[3]uintptr)(unsafe.Pointer(&allgs))
		fh := (*[3]uintptr)(unsafe.Pointer(&fake))
		*hdr = *fh
	}
	for {
		time.Sleep(time.Hour)
	}
}
