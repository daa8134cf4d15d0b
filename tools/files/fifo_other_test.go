//go:build !unix

package files_test

import "errors"

func mkfifo(string) error { return errors.New("named pipes are unix only") }
