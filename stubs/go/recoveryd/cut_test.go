package recoveryd

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutMessageKeepsHeadAndTail(t *testing.T) {
	long := "Traceback\n" + strings.Repeat("é frame\n", 20000) + "ConnectionResetError: reset"
	got := cutMessage(long)
	if len(got) > MessageSendMax || !utf8.ValidString(got) {
		t.Fatalf("cut to %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if !strings.HasPrefix(got, "Traceback") || !strings.HasSuffix(got, "ConnectionResetError: reset") ||
		!strings.Contains(got, " bytes cut ...]") {
		t.Fatalf("unexpected cut: %q ... %q", got[:40], got[len(got)-40:])
	}
	if cutMessage("short") != "short" {
		t.Fatal("a short message was changed")
	}
}
