// yaml-oracle reads YAML documents the way kubectl and the apiserver do (sigs.k8s.io/yaml, which reads
// YAML 1.1 scalars through go.yaml.in/yaml/v2) and prints what they become.
//
// Input (stdin): a JSON array of strings, each one YAML document.
// Output (stdout): a JSON array with one entry per input:
//
//	{"json": "<the JSON text sigs.k8s.io/yaml.YAMLToJSON produced>"}
//	{"error": "<its error>"}
//
// plus "strictError" when YAMLToJSONStrict (duplicate keys refused) fails where YAMLToJSON did not.
// The JSON is kept as text so that 64-bit integers reach the reader unrounded.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

type reading struct {
	JSON        *string `json:"json,omitempty"`
	Error       string  `json:"error,omitempty"`
	StrictError string  `json:"strictError,omitempty"`
}

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	var docs []string
	if err := json.Unmarshal(in, &docs); err != nil {
		fail(fmt.Errorf("stdin must be a JSON array of strings: %w", err))
	}
	out := make([]reading, 0, len(docs))
	for _, d := range docs {
		var r reading
		j, err := yaml.YAMLToJSON([]byte(d))
		if err != nil {
			r.Error = err.Error()
		} else {
			s := string(j)
			r.JSON = &s
			if _, err := yaml.YAMLToJSONStrict([]byte(d)); err != nil {
				r.StrictError = err.Error()
			}
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "yaml-oracle:", err)
	os.Exit(1)
}
