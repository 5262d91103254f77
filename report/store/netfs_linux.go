//go:build linux

package store

import "golang.org/x/sys/unix"

// statfsType is the type (f_type, its magic number) of the file system
// that holds path; a variable for the tests.
var statfsType = func(path string) (uint32, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, err
	}
	return uint32(st.Type), nil //nolint:gosec // a magic number: its low 32 bits on every architecture
}

// networkFileSystems are the file systems, by their magic number
// (statfs(2), linux/magic.h), whose files other machines may open and
// lock as well: a lock there may not keep out a run on another machine.
// Not 9P: WSL 2 mounts the Windows drives of the same laptop with it.
var networkFileSystems = map[uint32]string{
	0x6969:     "NFS",
	0x517B:     "SMB",
	0xFF534D42: "SMB (CIFS)",
	0xFE534D42: "SMB2",
	0x65735546: "FUSE (sshfs, a cloud drive)",
	0x5346414F: "AFS",
	0x00C36400: "CephFS",
	0x0BD00BD0: "Lustre",
	0x01161970: "GFS2",
	0x7461636F: "OCFS2",
}

// NetworkFileSystem names the network file system that holds path, or
// returns "" for a local disk, or when it cannot tell.
func NetworkFileSystem(path string) string {
	t, err := statfsType(path)
	if err != nil {
		return ""
	}
	return networkFileSystems[t]
}
