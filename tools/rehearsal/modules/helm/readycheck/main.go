// Command readycheck asks Helm's own ReadyChecker (helm.sh/helm/v3 pkg/kube, at the version this module pins)
// whether the first object of each case is ready, as `helm install --wait` judges it: the oracle the rehearsal's
// tools/rehearsal/helm_wait.py is compared with (tests/test_rehearsal_helm_wait.py, make rehearsal-test).
//
// stdin: a JSON list of {"name": ..., "objects": [...], "waitForJobs": bool}: the objects a fake clientset serves,
// the first the release's object judged. stdout: a JSON list of {"name": ..., "ready": bool, "error": "..."}.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
)

type testCase struct {
	Name        string            `json:"name"`
	Objects     []json.RawMessage `json:"objects"`
	WaitForJobs bool              `json:"waitForJobs"`
}

type verdict struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	Error string `json:"error,omitempty"`
}

func judge(c testCase) (verdict, error) {
	objects := make([]runtime.Object, 0, len(c.Objects))
	for _, raw := range c.Objects {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			return verdict{}, fmt.Errorf("case %q: %w", c.Name, err)
		}
		objects = append(objects, obj)
	}
	first := objects[0]
	accessor, err := runtime.DefaultUnstructuredConverter.ToUnstructured(first)
	if err != nil {
		return verdict{}, err
	}
	metadata, _ := accessor["metadata"].(map[string]interface{})
	name, _ := metadata["name"].(string)
	namespace, _ := metadata["namespace"].(string)
	checker := kube.NewReadyChecker(fake.NewClientset(objects...), nil, kube.PausedAsReady(true), kube.CheckJobs(c.WaitForJobs))
	ready, err := checker.IsReady(context.Background(), &resource.Info{Object: first, Name: name, Namespace: namespace})
	out := verdict{Name: c.Name, Ready: ready}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "readycheck: reading the cases:", err)
		os.Exit(2)
	}
	verdicts := make([]verdict, 0, len(cases))
	for _, c := range cases {
		v, err := judge(c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "readycheck:", err)
			os.Exit(2)
		}
		verdicts = append(verdicts, v)
	}
	if err := json.NewEncoder(os.Stdout).Encode(verdicts); err != nil {
		fmt.Fprintln(os.Stderr, "readycheck:", err)
		os.Exit(2)
	}
}
