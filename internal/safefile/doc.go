// Package safefile opens and reads the files a run is given (checkpoints, weights, metrics, CSV
// and .npy data, scripts) so that no file can hang or exhaust the process: only regular files are
// read (a FIFO, a device such as /dev/zero or /dev/urandom, or a folder is an error, and opening
// never blocks), whole reads are bounded by the file's real size and a caller's limit, and paths
// that must stay inside a folder are checked after symbolic links are resolved.
package safefile
