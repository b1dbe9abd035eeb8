package server

import "testing"

// growStack must keep its array on the stack: an allocation per call would trade the stack copies
// it saves for garbage.
func TestGrowStackAllocatesNothing(t *testing.T) {
	if n := testing.AllocsPerRun(100, growStack); n != 0 {
		t.Fatalf("growStack allocates %v times per call, want 0", n)
	}
}
