package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDeployConfigsValidate checks the shipped deployment files against
// wunder's own configuration validation (kubeconform, in `make
// deploy-check`, checks them against Kubernetes' schemas): the ConfigMap's
// wunder.yaml with the Secret's variables, and each compose replica's
// environment.
func TestDeployConfigsValidate(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("WUNDER_CONFIG_PATH", "")

	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	readYAML(t, "../../deploy/kubernetes/configmap.yaml", &cm)
	var secret struct {
		StringData map[string]string `yaml:"stringData"`
	}
	readYAML(t, "../../deploy/kubernetes/secret.yaml", &secret)
	cfgPath := filepath.Join(dir, "wunder.yaml")
	body := strings.ReplaceAll(cm.Data["wunder.yaml"], "/var/lib/wunder", filepath.Join(dir, "data"))
	if err := os.WriteFile(cfgPath, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range secret.StringData {
		t.Setenv(k, v)
	}
	code, out, errs := runCLI(t, t.Context(), "config", "validate", "--print", "--config", cfgPath)
	if code != exitOK {
		t.Fatalf("deploy/kubernetes/configmap.yaml with secret.yaml: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"host: 0.0.0.0", "backend: postgres"} {
		if !strings.Contains(out, want) {
			t.Errorf("effective configuration lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-replace-me") || strings.Contains(out, "replace-with-a-long-random-secret") {
		t.Errorf("--print shows a secret:\n%s", out)
	}

	var compose struct {
		Anchor struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"x-wunder"`
		Services map[string]map[string]any `yaml:"services"`
	}
	readYAML(t, "../../deploy/docker-compose.yaml", &compose)
	replicas := 0
	for name := range compose.Services {
		if strings.HasPrefix(name, "wunder-") {
			replicas++
		}
	}
	if replicas != 2 {
		t.Errorf("docker-compose.yaml has %d wunder replicas, want 2", replicas)
	}
	for k, v := range compose.Anchor.Environment {
		// Compose substitutes ${VAR:-default} and ${VAR:?msg}; validate as
		// if the operator set what is required and left the rest empty.
		switch {
		case strings.HasPrefix(v, "${") && strings.Contains(v, ":?"):
			v = "a-long-random-secret"
		case strings.HasPrefix(v, "${"):
			v = ""
		default:
			v = strings.ReplaceAll(v, "${POSTGRES_PASSWORD:-wunder}", "wunder")
		}
		t.Setenv(k, v)
	}
	t.Setenv("WUNDER_HOST", "0.0.0.0") // the image's ENV
	t.Setenv("WUNDER_DATA_DIR", filepath.Join(dir, "compose"))
	if code, out, errs := runCLI(t, t.Context(), "config", "validate"); code != exitOK {
		t.Fatalf("docker-compose.yaml's environment: exit %d\n%s%s", code, out, errs)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
