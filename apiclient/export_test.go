package apiclient

// MemoryTokens is a token kept in memory, for the tests outside the
// package.
func MemoryTokens(name string) TokenStore {
	return &keptTokens{cell: &keptCell{sem: make(chan struct{}, 1)}, path: name}
}
