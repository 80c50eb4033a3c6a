package main

import (
	"os"
	"os/exec"
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

// TestDeployHAFiles checks the HA topology's files: deploy/ha's compose
// runs three replicas and HAProxy, the replicas' wunder.yaml validates,
// HAProxy accepts its configuration (when haproxy is installed: CI
// installs it), and the Kubernetes Deployment runs three replicas with a
// grace period that covers its preStop, the drain and the shutdown.
func TestDeployHAFiles(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Image           string   `yaml:"image"`
			StopGracePeriod string   `yaml:"stop_grace_period"`
			Volumes         []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	readYAML(t, "../../deploy/ha/compose.yaml", &compose)
	replicas := 0
	for name, s := range compose.Services {
		if strings.HasPrefix(name, "wunder-") {
			replicas++
			if s.StopGracePeriod != "25s" {
				t.Errorf("%s: stop_grace_period %q; want 25s (drain 3 + shutdown 15 + margin)", name, s.StopGracePeriod)
			}
		}
	}
	if _, ok := compose.Services["haproxy"]; replicas != 3 || !ok {
		t.Errorf("deploy/ha/compose.yaml has %d wunder replicas and haproxy %v; want 3 and a balancer", replicas, ok)
	}

	dir := t.TempDir()
	b, err := os.ReadFile("../../deploy/ha/wunder.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "wunder.yaml")
	if err := os.WriteFile(cfgPath, []byte(strings.ReplaceAll(string(b), "/var/lib/wunder", filepath.Join(dir, "data"))), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WUNDER_CONFIG_PATH", "")
	t.Setenv("WUNDER_API_KEY", "a-long-random-secret")
	t.Setenv("WUNDER_POSTGRES_DSN", "postgres://wunder:wunder@postgres:5432/wunder?sslmode=disable")
	if code, out, errs := runCLI(t, t.Context(), "config", "validate", "--config", cfgPath); code != exitOK {
		t.Fatalf("deploy/ha/wunder.yaml: exit %d\n%s%s", code, out, errs)
	}

	haproxy := "/usr/sbin/haproxy"
	if _, err := os.Stat(haproxy); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("haproxy is not installed (.ci/run installs it): %v", err)
		}
		t.Log("haproxy not installed: deploy/ha/haproxy.cfg not checked")
	} else if out, err := exec.Command(haproxy, "-c", "-f", "../../deploy/ha/haproxy.cfg").CombinedOutput(); err != nil {
		t.Errorf("haproxy -c deploy/ha/haproxy.cfg: %v\n%s", err, out)
	}

	var dep struct {
		Spec struct {
			Replicas int `yaml:"replicas"`
			Template struct {
				Spec struct {
					Grace      int `yaml:"terminationGracePeriodSeconds"`
					Containers []struct {
						Lifecycle struct {
							PreStop struct {
								Sleep struct {
									Seconds int `yaml:"seconds"`
								} `yaml:"sleep"`
							} `yaml:"preStop"`
						} `yaml:"lifecycle"`
						Readiness struct {
							HTTPGet struct {
								Path string `yaml:"path"`
							} `yaml:"httpGet"`
							Period    int `yaml:"periodSeconds"`
							Threshold int `yaml:"failureThreshold"`
						} `yaml:"readinessProbe"`
						Liveness struct {
							HTTPGet struct {
								Path string `yaml:"path"`
							} `yaml:"httpGet"`
						} `yaml:"livenessProbe"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	readYAML(t, "../../deploy/kubernetes/deployment.yaml", &dep)
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	readYAML(t, "../../deploy/kubernetes/configmap.yaml", &cm)
	var cfg struct {
		Server struct {
			Drain    int `yaml:"drain_delay_s"`
			Shutdown int `yaml:"shutdown_timeout_s"`
		} `yaml:"server"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["wunder.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	spec := dep.Spec.Template.Spec
	c := spec.Containers[0]
	if dep.Spec.Replicas != 3 || c.Readiness.HTTPGet.Path != "/readyz" || c.Liveness.HTTPGet.Path != "/healthz" {
		t.Errorf("deployment: %d replicas, readiness %q, liveness %q; want 3, /readyz, /healthz",
			dep.Spec.Replicas, c.Readiness.HTTPGet.Path, c.Liveness.HTTPGet.Path)
	}
	if need := c.Lifecycle.PreStop.Sleep.Seconds + cfg.Server.Drain + cfg.Server.Shutdown; spec.Grace <= need {
		t.Errorf("terminationGracePeriodSeconds %d; want above preStop + drain_delay_s + shutdown_timeout_s = %d", spec.Grace, need)
	}
	if c.Readiness.Period*c.Readiness.Threshold >= cfg.Server.Drain {
		t.Errorf("readiness takes %d s to see a drain; want below drain_delay_s %d", c.Readiness.Period*c.Readiness.Threshold, cfg.Server.Drain)
	}
}
