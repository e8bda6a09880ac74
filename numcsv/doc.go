// Package numcsv reads tables of numbers from comma-separated files, plain or gzip-compressed, such as
// the handwritten-digits data set that scripts load with tensor.load_csv.
//
// [Read] and [ReadFile] return a [Table]: the values row after row as float32, with the number of rows
// and columns. Every row must have as many fields as the first; empty lines are skipped, and so are
// the first skip lines (a header). Errors are [*Error] values that name the file, line and column.
package numcsv
