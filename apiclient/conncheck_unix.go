//go:build unix && !aix

package apiclient

import (
	"errors"
	"net"
	"syscall"
)

// connAlive reports whether a kept-alive connection is still open: the
// server has sent nothing on it, not even its end. It peeks at the
// socket without blocking. A connection it cannot look into counts as
// alive.
func connAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := true
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n > 0: // an answer nobody asked for, or the start of a close
			alive = false
		case n == 0 && err == nil: // the server's end
			alive = false
		case err != nil && !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR):
			alive = false
		}
		return true // never wait for the socket to be readable
	})
	return alive && err == nil
}
