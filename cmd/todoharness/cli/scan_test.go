package cli

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `cassette scan` of a cassette holding a planted key masks it (first 4
// characters and a hash) unless --show-secrets; it finds the key
// hex-encoded too, and a --secret-env value in every form.
func TestCassetteScanMasksWhatItFinds(t *testing.T) {
	const key = "sk-proj-PLANTEDscan0123456789abcdef"
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.yaml")
	if err := os.WriteFile(plain, []byte("interactions: []\nnote: "+key+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI(context.Background(), "cassette", "scan", plain)
	if code, ok := err.(exitCode); !ok || code != 1 || strings.Contains(stderr, key[8:]) || !strings.Contains(stderr, "sk-p…") || !strings.Contains(stderr, "sha256 ") {
		t.Fatalf("scan: %v\n%s\nwant exit 1 with the key masked", err, stderr)
	}
	_, stderr, _ = runCLI(context.Background(), "cassette", "scan", "--show-secrets", plain)
	if !strings.Contains(stderr, key) {
		t.Fatalf("scan --show-secrets:\n%s\nwant the key whole", stderr)
	}

	hexed := filepath.Join(dir, "hex.yaml")
	if err := os.WriteFile(hexed, []byte("interactions: []\nnote: "+strings.ToUpper(hex.EncodeToString([]byte(key)))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runCLI(context.Background(), "cassette", "scan", hexed); err == nil {
		t.Fatalf("scan of the key hex-encoded: no finding\n%s", stderr)
	}

	t.Setenv("TODOHARNESS_TEST_PLANTED", "PlantedPassw0rdValue")
	pw := filepath.Join(dir, "pw.yaml")
	if err := os.WriteFile(pw, []byte("interactions: []\nnote: "+hex.EncodeToString([]byte("PlantedPassw0rdValue"))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(context.Background(), "cassette", "scan", pw); err != nil {
		t.Fatalf("without --secret-env the password is no credential shape: %v", err)
	}
	_, stderr, err = runCLI(context.Background(), "cassette", "scan", "--secret-env", "TODOHARNESS_TEST_PLANTED", pw)
	if err == nil || strings.Contains(stderr, "PlantedPassw0rdValue") || strings.Contains(stderr, hex.EncodeToString([]byte("PlantedPassw0rdValue"))) {
		t.Fatalf("scan --secret-env: %v\n%s\nwant a masked finding", err, stderr)
	}
}

// `cassette scan --secret-env` finds a key echoed reversed, or as the name
// of a response header (saved canonicalised, X-Sk-Proj-…), by its
// fragments, and prints neither.
func TestCassetteScanFindsFragmentsOfASecretEnvValue(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Xk4q", 7) // key-shaped, made at run time
	t.Setenv("TODOHARNESS_TEST_FRAGMENT_KEY", key)
	dir := t.TempDir()
	rev := []byte(key)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	for name, text := range map[string]string{
		"reversed":    "interactions: []\nnote: " + string(rev) + "\n",
		"header name": "interactions: []\nheaders:\n    X-Sk-Proj-" + strings.ToLower(key[8:9]) + key[9:] + ":\n        - \"1\"\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, err := runCLI(context.Background(), "cassette", "scan", "--secret-env", "TODOHARNESS_TEST_FRAGMENT_KEY", path)
		if code, ok := err.(exitCode); !ok || code != 1 || !strings.Contains(stderr, "fragment of a known secret") {
			t.Errorf("%s: scan: %v\n%s\nwant exit 1 naming a fragment", name, err, stderr)
		}
		if strings.Contains(stderr, key[8:20]) || strings.Contains(stderr, string(rev[:20])) {
			t.Errorf("%s: the scan prints the key:\n%s", name, stderr)
		}
	}
}
