// Command k8s-validate checks rendered Kubernetes manifests against the API types, offline.
//
// It reads multi-document YAML (from the files named, or stdin) and decodes every object strictly
// into the Go types of the Kubernetes API (k8s.io/api) and of the Prometheus operator's
// ServiceMonitor: an unknown field, a duplicate field, a value of the wrong type or a kind that is
// not known fails. The schemas are compiled in, so a check never downloads anything.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

func main() {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		appsv1.AddToScheme, autoscalingv2.AddToScheme, batchv1.AddToScheme, corev1.AddToScheme,
		networkingv1.AddToScheme, policyv1.AddToScheme, rbacv1.AddToScheme, monitoringv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			fail("registering API types: %v", err)
		}
	}
	decoder := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})

	inputs := os.Args[1:]
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	objects, problems := 0, 0
	for _, input := range inputs {
		reader, err := open(input)
		if err != nil {
			fail("%v", err)
		}
		documents := utilyaml.NewYAMLReader(bufio.NewReader(reader))
		for {
			document, err := documents.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				fail("%s: reading YAML: %v", input, err)
			}
			if isEmpty(document) {
				continue
			}
			objects++
			obj, gvk, err := decoder.Decode(document, nil, nil)
			if err != nil {
				problems++
				fmt.Fprintf(os.Stderr, "%s: %s: %v\n", input, describe(document, gvk), err)
				continue
			}
			_ = obj
		}
	}
	fmt.Printf("%d objects checked, %d invalid\n", objects, problems)
	if problems > 0 || objects == 0 {
		os.Exit(1)
	}
}

func open(input string) (io.Reader, error) {
	if input == "-" {
		return os.Stdin, nil
	}
	return os.Open(input)
}

// A document of only comments and blank lines (helm writes one per empty template) holds no object.
func isEmpty(document []byte) bool {
	for _, line := range bytes.Split(document, []byte("\n")) {
		trimmed := strings.TrimSpace(string(line))
		if trimmed != "" && trimmed != "---" && !strings.HasPrefix(trimmed, "#") {
			return false
		}
	}
	return true
}

// The object's source template (helm's "# Source:" comment) or its kind, for the error message.
func describe(document []byte, gvk interface{ String() string }) string {
	for _, line := range bytes.Split(document, []byte("\n")) {
		if source, found := strings.CutPrefix(strings.TrimSpace(string(line)), "# Source: "); found {
			return source
		}
	}
	if gvk != nil {
		return gvk.String()
	}
	return "object"
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "k8s-validate: "+format+"\n", args...)
	os.Exit(2)
}
