package core

func adviseSlab(b []byte) {}
