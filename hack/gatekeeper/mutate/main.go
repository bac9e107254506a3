// gatekeeper-mutate runs Gatekeeper's own mutation system (github.com/open-policy-agent/gatekeeper/v3,
// pkg/mutation) over cases read as JSON lines on stdin, one answer line per case on stdout, so that
// Flotilla's implementation of the same mutators can be compared with it (test/gatekeeper/differential).
//
// A case: {"mutators": [Assign|AssignMetadata|ModifySet|AssignImage objects], "object": {...},
// "operation": "CREATE"|"UPDATE", "namespaceLabels": {...}}. The object is handled as Gatekeeper's
// mutating webhook handles an admission request (pkg/webhook/mutation.go): a Namespace is its own
// namespace, a namespaced object's Namespace is one with namespaceLabels, the source is "Original".
//
// An answer: {"invalid": {"Kind/name": "why MutatorForX refused it"}, "conflicts": ["Kind/name", ...],
// "object": {...}} or {..., "error": "why Mutate failed"}; {"bad": "..."} for a line that is not a case.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/open-policy-agent/gatekeeper/v3/apis/mutations/unversioned"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/mutation"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/mutation/mutators"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/mutation/schema"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/mutation/types"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "sigs.k8s.io/json"
)

type testCase struct {
	Mutators        []json.RawMessage `json:"mutators"`
	Object          json.RawMessage   `json:"object"`
	Operation       string            `json:"operation"`
	NamespaceLabels map[string]string `json:"namespaceLabels"`
}

type answer struct {
	Invalid   map[string]string `json:"invalid"`
	Conflicts []string          `json:"conflicts"`
	Object    json.RawMessage   `json:"object,omitempty"`
	Error     string            `json:"error,omitempty"`
	Bad       string            `json:"bad,omitempty"`
}

// decode reads an API object as the apiserver's clients do (case-sensitive, integers kept as int64).
func decode(raw []byte, into interface{}) error {
	strict, err := kjson.UnmarshalStrict(raw, into)
	if err != nil {
		return err
	}
	_ = strict // unknown fields (assignIf, ...) are pruned by the CRDs in a cluster: ignored here too
	return nil
}

func mutatorFor(raw []byte) (string, types.Mutator, error) {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return "", nil, err
	}
	id := head.Kind + "/" + head.Metadata.Name
	switch head.Kind {
	case "Assign":
		var o unversioned.Assign
		if err := decode(raw, &o); err != nil {
			return id, nil, err
		}
		m, err := mutators.MutatorForAssign(&o)
		if err != nil {
			return id, nil, err
		}
		return id, m, nil
	case "AssignMetadata":
		var o unversioned.AssignMetadata
		if err := decode(raw, &o); err != nil {
			return id, nil, err
		}
		m, err := mutators.MutatorForAssignMetadata(&o)
		if err != nil {
			return id, nil, err
		}
		return id, m, nil
	case "ModifySet":
		var o unversioned.ModifySet
		if err := decode(raw, &o); err != nil {
			return id, nil, err
		}
		m, err := mutators.MutatorForModifySet(&o)
		if err != nil {
			return id, nil, err
		}
		return id, m, nil
	case "AssignImage":
		var o unversioned.AssignImage
		if err := decode(raw, &o); err != nil {
			return id, nil, err
		}
		m, err := mutators.MutatorForAssignImage(&o)
		if err != nil {
			return id, nil, err
		}
		return id, m, nil
	}
	return id, nil, fmt.Errorf("unknown kind %q", head.Kind)
}

func run(line []byte) answer {
	out := answer{Invalid: map[string]string{}, Conflicts: []string{}}
	var c testCase
	if err := json.Unmarshal(line, &c); err != nil {
		out.Bad = err.Error()
		return out
	}
	system := mutation.NewSystem(mutation.SystemOpts{})
	conflicts := map[string]bool{}
	for _, raw := range c.Mutators {
		id, m, err := mutatorFor(raw)
		if err != nil {
			out.Invalid[id] = err.Error()
			continue
		}
		if err := system.Upsert(m); err != nil {
			var conflict schema.ErrConflictingSchema
			if !errors.As(err, &conflict) {
				out.Invalid[id] = err.Error()
				continue
			}
			for cid := range conflict.Conflicts {
				conflicts[cid.Kind+"/"+cid.Name] = true
			}
		}
	}
	for id := range conflicts {
		out.Conflicts = append(out.Conflicts, id)
	}
	sort.Strings(out.Conflicts)

	obj := unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(c.Object); err != nil {
		out.Bad = err.Error()
		return out
	}
	// As pkg/webhook/mutation.go mutateRequest.
	var ns *corev1.Namespace
	reqNamespace := obj.GetNamespace()
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Kind == "Namespace" && gvk.Group == "":
		reqNamespace = ""
		ns = &corev1.Namespace{}
		if err := json.Unmarshal(c.Object, ns); err != nil {
			out.Bad = err.Error()
			return out
		}
	case reqNamespace != "":
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: reqNamespace, Labels: c.NamespaceLabels}}
	}
	oldNS := obj.GetNamespace()
	obj.SetNamespace(reqNamespace)
	mutable := &types.Mutable{
		Object:    &obj,
		Namespace: ns,
		Source:    types.SourceTypeOriginal,
		Operation: admissionv1.Operation(c.Operation),
	}
	mutated, err := system.Mutate(context.Background(), mutable)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	if !mutated {
		out.Object = c.Object
		return out
	}
	mutable.Object.SetNamespace(oldNS)
	js, err := mutable.Object.MarshalJSON()
	if err != nil {
		out.Error = err.Error()
		return out
	}
	out.Object = js
	return out
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 && !(len(line) == 1 && line[0] == '\n') {
			if encErr := enc.Encode(run(line)); encErr != nil {
				fmt.Fprintln(os.Stderr, encErr)
				os.Exit(1)
			}
			if flushErr := w.Flush(); flushErr != nil {
				os.Exit(1)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
