//go:build !linux

package store

// NetworkFileSystem names the network file system that holds path; off
// Linux it cannot tell, and returns "".
func NetworkFileSystem(string) string { return "" }
