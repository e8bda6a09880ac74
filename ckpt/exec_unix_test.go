//go:build unix

package ckpt

import "syscall"

var syscallExec = syscall.Exec
