// promlint reads a Prometheus text exposition on stdin and prints the
// problems the Prometheus client library's linter finds, one per line
// ("metric: text"); it exits 1 when there is any, 2 when the input does not
// parse. The metrics tests run recoveryd's /metrics through it.
package main

import (
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
)

func main() {
	problems, err := promlint.New(os.Stdin).Lint()
	if err != nil {
		fmt.Fprintln(os.Stderr, "promlint:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Printf("%s: %s\n", p.Metric, p.Text)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}
