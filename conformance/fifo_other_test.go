//go:build !unix

package conformance

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this system") }
