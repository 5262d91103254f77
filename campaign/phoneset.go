package campaign

// phoneSet is the set of dedupe keys a ContactReader has seen: packed
// phone numbers (see phoneKey), never 0. It is an open-addressing table of
// uint64s, 8 to 11 bytes a number, where a map[uint64]uint32 took about 36
// bytes: a million numbers fit in 16 MiB. Counts are kept only for the
// numbers that repeat.
type phoneSet struct {
	slots   []uint64 // 0 is an empty slot
	n       int
	shift   uint
	repeats map[uint64]uint32 // key -> times seen beyond the first
}

func newPhoneSet() *phoneSet {
	const initialBits = 10
	return &phoneSet{slots: make([]uint64, 1<<initialBits), shift: 64 - initialBits, repeats: map[uint64]uint32{}}
}

// add records one more sighting of key and returns how many times it was
// seen before.
func (s *phoneSet) add(key uint64) uint32 {
	if key == 0 {
		return 0 // not a valid number; never deduplicated
	}
	if s.n*4 >= len(s.slots)*3 {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> s.shift; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			s.slots[i] = key
			s.n++
			return 0
		case key:
			s.repeats[key]++
			return s.repeats[key]
		}
	}
}

// grow doubles the table and places every key again.
func (s *phoneSet) grow() {
	old := s.slots
	s.slots = make([]uint64, len(old)*2)
	s.shift--
	mask := uint64(len(s.slots) - 1)
	for _, key := range old {
		if key == 0 {
			continue
		}
		i := (key * 0x9E3779B97F4A7C15) >> s.shift
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = key
	}
}
