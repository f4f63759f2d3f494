package session

import "testing"

// A Dir's NoFsync reaches the stores of the logs it creates and opens
// (their Sync then only writes to the kernel); without it they fsync.
func TestNoFsyncReachesTheStores(t *testing.T) {
	for _, noFsync := range []bool{false, true} {
		d := Dir{Path: t.TempDir(), NoFsync: noFsync}
		l, err := d.Create("s", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Append(TypeTurnStart, TurnStart{Turn: 1, Trigger: Trigger{Kind: "message"}}); err != nil {
			t.Fatal(err)
		}
		created := l.store.noFsync
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, _, err = d.Open("s")
		if err != nil {
			t.Fatal(err)
		}
		opened := l.store.noFsync
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if created != noFsync || opened != noFsync {
			t.Errorf("Dir.NoFsync %v: the created log's store has noFsync %v, the opened one's %v", noFsync, created, opened)
		}
	}
}
