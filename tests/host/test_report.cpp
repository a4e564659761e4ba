// memtopo report: tests (filled in with the command).
