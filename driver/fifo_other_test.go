//go:build !unix

package driver

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs on this system") }
