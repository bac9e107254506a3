// Command etcd is upstream's etcd server main, built from the Go module proxy so that the integration
// tests can run a real etcd (see ../README.md).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
