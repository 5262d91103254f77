//go:build linux

package store

import "testing"

// TestNetworkFileSystemNamed: a state directory on NFS or SMB is named
// (its lock, an flock, may not keep out a run on another machine that
// mounts it), a local disk's is not, and one whose file system cannot be
// read is taken for local rather than stopping anything.
func TestNetworkFileSystemNamed(t *testing.T) {
	old := statfsType
	t.Cleanup(func() { statfsType = old })
	for _, tc := range []struct {
		magic uint32
		want  string
	}{
		{0x6969, "NFS"},            // NFS_SUPER_MAGIC
		{0xFF534D42, "SMB (CIFS)"}, // CIFS_SUPER_MAGIC, as a 32-bit system's negative f_type reads too
		{0xFE534D42, "SMB2"},
		{0xEF53, ""},     // ext4
		{0x58465342, ""}, // XFS
		{0x01021994, ""}, // tmpfs
		{0x01021997, ""}, // 9P: WSL 2's mount of the laptop's own Windows drives
	} {
		statfsType = func(string) (uint32, error) { return tc.magic, nil }
		if got := NetworkFileSystem(t.TempDir()); got != tc.want {
			t.Errorf("file system %#x: %q, want %q", tc.magic, got, tc.want)
		}
	}
}
