// A Go program (cgo, so that it loads the preloaded runtime as any dynamically linked program):
// its runtime installs a handler for every signal by the raw rt_sigaction system call. Two
// goroutines, each locked to its own thread, spin known CPU times in spinGo and print them
// ("truth THREAD spinGo SECONDS", by the thread's CPU clock); the program exits with status 5.
package main

// #include <stdlib.h>
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

var sink uint64

func cpuNow() float64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return float64(ts.Sec) + float64(ts.Nsec)*1e-9
}

//go:noinline
func spinGo(seconds float64) float64 {
	t0 := cpuNow()
	x := uint64(1)
	for cpuNow()-t0 < seconds {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + uint64(i)
		}
	}
	sink += x
	return cpuNow() - t0
}

func main() {
	C.free(C.malloc(8))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			runtime.LockOSThread()
			s := spinGo(0.4)
			mu.Lock()
			fmt.Printf("truth go%d spinGo %.6f\n", i, s)
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	fmt.Println("go done")
	os.Exit(5)
}
