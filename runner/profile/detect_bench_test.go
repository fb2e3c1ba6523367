package profile

import (
	"crypto/sha256"
	"os"
	"testing"
)

// BenchmarkDetect measures one classification of a real 120x40 screen,
// against a baseline from the same run: hashing the same screen, which a
// poller does on every capture anyway.
func BenchmarkDetect(b *testing.B) {
	raw, err := os.ReadFile(sharedScreens + "/claude__busy__9.ansi")
	if err != nil {
		b.Skipf("fixtures not found: %v", err)
	}
	screen := string(raw)
	p, _ := BuiltinProfile("claude")
	b.Run("baseline-sha256", func(b *testing.B) {
		for b.Loop() {
			sha256.Sum256(raw)
		}
	})
	b.Run("detect", func(b *testing.B) {
		for b.Loop() {
			if Detect(p, screen).State != StateBusy {
				b.Fatal("misclassified")
			}
		}
	})
	b.Run("mask-volatile", func(b *testing.B) {
		for b.Loop() {
			MaskVolatile(p, screen)
		}
	})
}
