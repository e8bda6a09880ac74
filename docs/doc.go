// Package docs holds the project's documentation pages; its tests run the examples the pages show, so that
// the pages cannot drift from the code.
package docs
