//go:build !race

package phone

// raceDetector is true in a test binary built with -race.
const raceDetector = false
