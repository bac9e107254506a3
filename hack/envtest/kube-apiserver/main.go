// Command kube-apiserver is upstream's cmd/kube-apiserver main, built from the Go module proxy so that
// the integration tests can run a real apiserver (see ../README.md).
package main

import (
	"os"
	_ "time/tzdata" // same as upstream: zone data for CronJob time zones

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // build-info metric
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
