// A fresh module's executor: the tool fails once, then answers; prints
// "<status> attempts=<n> fallback=<bool>".
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/recoveryd/recoveryd/stubs/go/recoveryd"
)

func main() {
	c, err := recoveryd.Dial(os.Args[1], recoveryd.Options{RPCTimeout: 2 * time.Second, ExecutorID: "go-user"})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	n := 0
	res := c.Run(context.Background(), recoveryd.Call{ToolID: "weather", TurnID: "go-user",
		Tools: map[string]recoveryd.ToolFunc{"weather": func(ctx context.Context) (any, error) {
			n++
			if n < 2 {
				return nil, &recoveryd.ToolError{Message: "connection reset by peer", Code: "ECONNRESET"}
			}
			return "3C", nil
		}}})
	fmt.Printf("%s attempts=%d fallback=%t\n", res.Status, res.Attempts, res.Fallback)
}
