"""The Helm chart: lint, render, validate every manifest against Kubernetes' schemas offline (strict), and check
what the manifests say against the values they came from."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from connect.bootstrap import load_spec
from connect.config.environment import environment_properties
from connect.config.properties import parse_properties
from connect.runtime.worker_config import WorkerConfig
from tests.helm.conftest import EXAMPLE_VALUES, KUBE_VERSION, Helm, find, kinds

# monitoring.coreos.com/v1 ServiceMonitor is a CRD: no schema of it ships with kubernetes-validate. The fields
# the chart renders, checked as strictly (written here from the Prometheus Operator's API documentation).
_LABEL_SELECTOR = {"type": "object", "additionalProperties": False,
                   "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}}}
SERVICE_MONITOR_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"}, "kind": {"const": "ServiceMonitor"},
        "metadata": {"type": "object"},
        "spec": {"type": "object", "additionalProperties": False, "required": ["selector", "endpoints"],
                 "properties": {
                     "selector": _LABEL_SELECTOR,
                     "namespaceSelector": {"type": "object", "additionalProperties": False, "properties": {
                         "matchNames": {"type": "array", "items": {"type": "string"}}}},
                     "endpoints": {"type": "array", "minItems": 1, "items": {
                         "type": "object", "additionalProperties": False, "required": ["port"], "properties": {
                             "port": {"type": "string"}, "path": {"type": "string"},
                             "interval": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"},
                             "scrapeTimeout": {"type": "string", "pattern": "^[0-9]+(ms|s|m|h)$"}}}}}},
    },
}

SCENARIOS: dict[str, tuple[list[Path], dict[str, str]]] = {
    "defaults": ([], {}),
    "production-example": ([EXAMPLE_VALUES], {}),
    "everything-off": ([], {"podDisruptionBudget.enabled": "false", "serviceAccount.create": "false",
                            "metrics.annotations": "false", "probes.startup.enabled": "false",
                            "probes.liveness.enabled": "false", "probes.readiness.enabled": "false"}),
    "tcp-probes-basic-auth-hook": ([EXAMPLE_VALUES], {
        "probes.startup.type": "tcp", "probes.readiness.type": "tcp", "probes.liveness.type": "tcp",
        "bootstrap.basicAuth.user": "admin", "bootstrap.basicAuth.passwordSecret.name": "rest-admin"}),
}


def _secret_values(values_file: Path) -> list[str]:
    """Every secret string of a values file: each stringData file, and each value inside a properties file."""
    values = yaml.safe_load(values_file.read_text())
    found: list[str] = []
    for secret in values["secrets"].values():
        for content in (secret.get("stringData") or {}).values():
            found.append(content.strip())
            found += [v for v in parse_properties(content).values() if len(v) >= 8]
    assert found
    return found


@pytest.mark.parametrize("values", [[], [EXAMPLE_VALUES]], ids=["defaults", "production-example"])
def test_lint_strict(helm: Helm, values: list[Path]) -> None:
    report = helm.lint(*values)
    # `helm lint --strict`'s "1 chart(s) linted, 0 chart(s) failed": strict counts warnings as errors
    assert report["total_charts_linted"] == 1
    assert report["errors"] == [], report["messages"]


def test_renders_without_naming_a_kubernetes_version(helm: Helm) -> None:
    # the SDK assumes the Kubernetes of its client libraries, as a released Helm does (not 1.20); Helm's install
    # action checks the chart's kubeVersion against it
    release = helm.install_dry_run()
    assert "kind: StatefulSet" in release["manifest"]
    assert "kind: StatefulSet" in helm.render(kube_version=None)["templates/statefulset.yaml"]


@pytest.mark.parametrize("kube_version", ["1.29.0", KUBE_VERSION, kubernetes_validate.utils.latest_version()])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_manifest_validates_strictly(helm: Helm, scenario: str, kube_version: str) -> None:
    values, sets = SCENARIOS[scenario]
    manifests = helm.template(*values, sets=sets)
    assert manifests
    for manifest in manifests:
        if manifest["apiVersion"].startswith("monitoring.coreos.com/"):
            jsonschema.validate(manifest, SERVICE_MONITOR_SCHEMA)
            continue
        try:
            kubernetes_validate.validate(manifest, kube_version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(p) for p in exc.path)
            pytest.fail(f"{manifest['kind']}/{manifest['metadata']['name']}: {path}: {exc.message}")


def test_default_release_objects(helm: Helm) -> None:
    manifests = helm.template()
    assert kinds(manifests) == ["ConfigMap", "PodDisruptionBudget", "Service", "Service", "ServiceAccount",
                                "StatefulSet"]
    sts = find(manifests, "StatefulSet")
    assert sts["spec"]["replicas"] == 1 and sts["spec"]["serviceName"] == "cdc-pyconnect-workers"
    assert find(manifests, "Service", "cdc-pyconnect-workers")["spec"]["clusterIP"] == "None"
    assert find(manifests, "PodDisruptionBudget")["spec"]["maxUnavailable"] == 1


def _worker_properties(manifests: list[dict[str, Any]]) -> dict[str, str]:
    """The worker properties the pod's environment gives (the ConfigMap loaded with envFrom, read back as the
    worker reads CONNECT_* variables)."""
    data = find(manifests, "ConfigMap", "cdc-pyconnect")["data"]
    assert all(name.startswith("CONNECT_") for name in data)
    return environment_properties(data)


def test_the_pod_takes_its_properties_from_the_environment(helm: Helm) -> None:
    manifests = helm.template()
    container = find(manifests, "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["connect-distributed"] and container["args"] == []
    assert container["envFrom"] == [{"configMapRef": {"name": "cdc-pyconnect"}}]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["CONNECT_REST_ADVERTISED_HOST_NAME"] == "$(POD_NAME).cdc-pyconnect-workers.$(POD_NAMESPACE).svc"
    with_secret = find(helm.template(sets={"worker.kafkaClientSecret.name": "kafka-client"}),
                       "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    assert with_secret["args"] == ["/etc/pyconnect/kafka-client/client.properties"]


def test_metrics_port(helm: Helm) -> None:
    manifests = helm.template(sets={"metrics.port": "9404", "metrics.serviceMonitor.enabled": "true",
                                    "networkPolicy.enabled": "true"})
    assert _worker_properties(manifests)["metrics.listener"] == "http://0.0.0.0:9404"
    pod = find(manifests, "StatefulSet")["spec"]["template"]
    assert pod["metadata"]["annotations"]["prometheus.io/port"] == "9404"
    assert {"name": "metrics", "containerPort": 9404, "protocol": "TCP"} in pod["spec"]["containers"][0]["ports"]
    headless = find(manifests, "Service", "cdc-pyconnect-workers")["spec"]["ports"]
    assert {"name": "metrics", "port": 9404, "targetPort": "metrics", "protocol": "TCP"} in headless
    assert find(manifests, "ServiceMonitor")["spec"]["endpoints"][0]["port"] == "metrics"
    ingress = find(manifests, "NetworkPolicy")["spec"]["ingress"]
    assert {"ports": [{"port": "metrics", "protocol": "TCP"}]} in ingress


def test_worker_properties_match_values(helm: Helm) -> None:
    values = yaml.safe_load(EXAMPLE_VALUES.read_text())["worker"]
    props = _worker_properties(helm.template(EXAMPLE_VALUES))
    expected = {
        "bootstrap.servers": values["bootstrapServers"], "group.id": "cdc-connect",
        "config.storage.topic": "cdc-connect-configs", "offset.storage.topic": "cdc-connect-offsets",
        "status.storage.topic": "cdc-connect-status", "config.storage.replication.factor": "3",
        "offset.storage.replication.factor": "3", "status.storage.replication.factor": "3",
        "offset.storage.partitions": "25", "status.storage.partitions": "5",
        "key.converter": values["keyConverter"], "value.converter": values["valueConverter"],
        "offset.flush.interval.ms": "10000", "task.shutdown.graceful.timeout.ms": "20000",
        "listeners": "http://0.0.0.0:8083", "rest.advertised.port": "8083",
        "config.providers": "file,dir",
        "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        "config.providers.dir.class": "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
        "key.converter.schemas.enable": "false", "value.converter.schemas.enable": "false",
        "producer.compression.type": "zstd", "connector.client.config.override.policy": "All",
    }
    assert props == expected
    config, _ = WorkerConfig.parse(props, distributed=True)  # the worker itself accepts them
    assert config.offset_flush_interval_ms == 10000 and config.listener() == ("0.0.0.0", 8083)


def test_worker_properties_defaults_and_escaping(helm: Helm) -> None:
    props = _worker_properties(helm.template(sets={
        "worker.offsetFlushIntervalMs": "1000000", "worker.properties.producer\\.linger\\.ms": "5",
        "worker.properties.some\\.path": "C:\\\\data\\\\x"}))
    assert props["group.id"] == "cdc-pyconnect"
    assert props["config.storage.topic"] == "cdc-pyconnect-configs"
    assert props["offset.flush.interval.ms"] == "1000000"  # not 1e+06
    assert props["producer.linger.ms"] == "5"
    assert props["some.path"] == "C:\\data\\x"
    WorkerConfig.parse(props, distributed=True)


def test_secrets_are_files_never_clear_text_in_configmaps_or_env(helm: Helm) -> None:
    text = helm.template_text(EXAMPLE_VALUES)
    manifests = [m for m in yaml.safe_load_all(text) if m]
    secrets = _secret_values(EXAMPLE_VALUES)
    for secret in secrets:
        assert secret not in text, "a secret is rendered in clear"
    created = find(manifests, "Secret", "cdc-pyconnect-mongodb")
    assert "stringData" not in created
    decoded = base64.b64decode(created["data"]["mongodb.properties"]).decode()
    assert decoded.strip() == secrets[0]
    # mounted as files where the connector's ${file:...} placeholder points
    pod = find(manifests, "StatefulSet")["spec"]["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert mounts["secret-mongodb"] == "/etc/pyconnect/secrets/mongodb"
    assert volumes["secret-mongodb"]["secret"]["secretName"] == "cdc-pyconnect-mongodb"
    assert volumes["secret-kafka-sasl"]["secret"]["secretName"] == "kafka-connector-sasl"
    assert volumes["kafka-client"]["secret"]["secretName"] == "kafka-client"
    connector = json.loads(find(manifests, "ConfigMap", "cdc-pyconnect-connectors")["data"]["inventory.json"])
    placeholder = connector["config"]["mongodb.connection.string"]
    assert placeholder == "${file:/etc/pyconnect/secrets/mongodb/mongodb.properties:connection.string}"
    # env: plain values carry no secret, and nothing comes from a Secret through env
    for container in pod["containers"]:
        for env in container["env"]:
            assert "secretKeyRef" not in json.dumps(env)
            assert all(secret not in str(env.get("value", "")) for secret in secrets)
    for configmap in (m for m in manifests if m["kind"] == "ConfigMap"):
        assert all(secret not in json.dumps(configmap["data"]) for secret in secrets)


def test_probes_point_at_health_and_are_tunable(helm: Helm) -> None:
    container = find(helm.template(), "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"name": "http", "containerPort": 8083, "protocol": "TCP"}]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}
    # liveness tolerates a slow worker for failureThreshold x periodSeconds before a restart
    assert container["livenessProbe"]["failureThreshold"] * container["livenessProbe"]["periodSeconds"] >= 60
    assert container["startupProbe"]["failureThreshold"] * container["startupProbe"]["periodSeconds"] >= 120
    tuned = find(helm.template(sets={"probes.liveness.path": "/health?deep", "probes.liveness.periodSeconds": "7",
                                     "probes.startup.enabled": "false", "worker.restPort": "9083"}),
                 "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    assert tuned["livenessProbe"]["httpGet"]["path"] == "/health?deep"
    assert tuned["livenessProbe"]["periodSeconds"] == 7
    assert "startupProbe" not in tuned
    assert tuned["ports"][0]["containerPort"] == 9083
    tcp = find(helm.template(sets={"probes.readiness.type": "tcp"}),
               "StatefulSet")["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]
    assert tcp["tcpSocket"] == {"port": "http"} and "httpGet" not in tcp


def test_termination_grace_period_exceeds_task_shutdown_timeout(helm: Helm) -> None:
    def grace(**sets: str) -> int:
        sts = find(helm.template(sets=sets), "StatefulSet")
        return int(sts["spec"]["template"]["spec"]["terminationGracePeriodSeconds"])

    assert grace() == 35  # 5 s task shutdown + 30
    assert grace(**{"worker.taskShutdownGracefulTimeoutMs": "45500"}) == 76
    assert grace(**{"terminationGracePeriodSeconds": "90"}) == 90
    error = helm.template_error(sets={"terminationGracePeriodSeconds": "10",
                                      "worker.taskShutdownGracefulTimeoutMs": "20000"})
    assert "terminationGracePeriodSeconds (10) must exceed worker.taskShutdownGracefulTimeoutMs" in error


def test_security_contexts_non_root_read_only(helm: Helm) -> None:
    for manifest in helm.template(EXAMPLE_VALUES):
        if manifest["kind"] not in ("StatefulSet", "Job"):
            continue
        pod = manifest["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 10001
        assert pod["automountServiceAccountToken"] is False
        for container in pod["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True
            assert context["allowPrivilegeEscalation"] is False
            assert context["capabilities"]["drop"] == ["ALL"]


def test_scheduling_values_pass_through(helm: Helm) -> None:
    values = yaml.safe_load(EXAMPLE_VALUES.read_text())
    pod = find(helm.template(EXAMPLE_VALUES), "StatefulSet")["spec"]["template"]["spec"]
    for key in ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints", "imagePullSecrets"):
        assert pod[key] == values[key]
    assert pod["containers"][0]["resources"] == values["resources"]
    assert pod["containers"][0]["image"] == "registry.example.com/data/pyconnect-mongodb:0.1.0"


def test_autoscaler_off_by_default_and_owns_replicas_when_on(helm: Helm) -> None:
    assert "HorizontalPodAutoscaler" not in kinds(helm.template())
    manifests = helm.template(EXAMPLE_VALUES)
    hpa = find(manifests, "HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "cdc-pyconnect"}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 6)
    assert "replicas" not in find(manifests, "StatefulSet")["spec"]


def test_prometheus_annotations_and_service_monitor(helm: Helm) -> None:
    default = helm.template()
    annotations = find(default, "StatefulSet")["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == "8083" and annotations["prometheus.io/path"] == "/metrics"
    assert "ServiceMonitor" not in kinds(default)
    manifests = helm.template(EXAMPLE_VALUES)
    monitor = find(manifests, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    assert monitor["spec"]["endpoints"] == [{"port": "http", "path": "/metrics", "interval": "15s",
                                             "scrapeTimeout": "10s"}]
    selector = monitor["spec"]["selector"]["matchLabels"]
    selected = [s["metadata"]["name"] for s in manifests if s["kind"] == "Service"
                and selector.items() <= s["metadata"]["labels"].items()]
    assert selected == ["cdc-pyconnect-workers"]  # the headless Service: every pod, scraped once


def test_connector_bootstrap_hook(helm: Helm, tmp_path: Path) -> None:
    assert "Job" not in kinds(helm.template())  # no connectors, no hook
    manifests = helm.template(EXAMPLE_VALUES)
    job = find(manifests, "Job")
    configmap = find(manifests, "ConfigMap", "cdc-pyconnect-connectors")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "post-install,post-upgrade"
    assert "hook-succeeded" in job["metadata"]["annotations"]["helm.sh/hook-delete-policy"]
    assert "annotations" not in configmap["metadata"]  # installed with the release, before post-* hooks run
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["command"] == ["python", "-m", "connect.bootstrap", "--url", "http://cdc-pyconnect.data.svc:8083",
                                    "--timeout", "600", "/etc/pyconnect/connectors"]
    assert container["volumeMounts"] == [{"name": "connectors", "mountPath": "/etc/pyconnect/connectors",
                                          "readOnly": True}]
    assert pod["volumes"][0]["configMap"]["name"] == "cdc-pyconnect-connectors"
    assert job["spec"]["activeDeadlineSeconds"] > 600
    # the file the hook reads is what the values declare, as Connect stores it (strings)
    (tmp_path / "inventory.json").write_text(configmap["data"]["inventory.json"])
    spec = load_spec(tmp_path / "inventory.json")
    declared = yaml.safe_load(EXAMPLE_VALUES.read_text())["connectors"]["inventory"]["config"]
    assert spec.name == "inventory"
    assert spec.config == {**{k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in declared.items()},
                           "name": "inventory"}


def test_bootstrap_hook_with_basic_auth_reads_the_password_from_a_secret_file(helm: Helm) -> None:
    manifests = helm.template(EXAMPLE_VALUES, sets={"bootstrap.basicAuth.user": "admin",
                                                    "bootstrap.basicAuth.passwordSecret.name": "rest-admin"})
    pod = find(manifests, "Job")["spec"]["template"]["spec"]
    command = pod["containers"][0]["command"]
    assert command[command.index("--user") + 1] == "admin"
    assert command[command.index("--password-file") + 1] == "/etc/pyconnect/rest-password/password"
    assert {"name": "rest-password", "mountPath": "/etc/pyconnect/rest-password", "readOnly": True} in \
        pod["containers"][0]["volumeMounts"]
    assert {"name": "rest-password", "secret": {"secretName": "rest-admin", "defaultMode": 0o440}} in pod["volumes"]
    assert "env" not in pod["containers"][0]


def test_network_policy_admits_the_release_and_listed_peers(helm: Helm) -> None:
    assert "NetworkPolicy" not in kinds(helm.template())
    manifests = helm.template(EXAMPLE_VALUES)
    policy = find(manifests, "NetworkPolicy")["spec"]
    assert policy["podSelector"]["matchLabels"] == find(manifests, "StatefulSet")["spec"]["selector"]["matchLabels"]
    rule = policy["ingress"][0]
    assert rule["ports"] == [{"port": "http", "protocol": "TCP"}]
    job_labels = find(manifests, "Job")["spec"]["template"]["metadata"]["labels"]
    assert rule["from"][0]["podSelector"]["matchLabels"].items() <= job_labels.items()
    assert rule["from"][1] == {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}


def test_notes_tell_how_to_reach_the_rest_api(helm: Helm) -> None:
    # Helm prints NOTES.txt only on install, which needs a cluster; the SDK renders it with the templates
    text = helm.render(EXAMPLE_VALUES)["templates/NOTES.txt"]
    assert "http://cdc-pyconnect.data.svc:8083" in text
    assert "kubectl --namespace data port-forward service/cdc-pyconnect 8083:8083" in text
    assert "Connectors managed by this release: inventory." in text
    assert "3-6 workers (autoscaled)" in text


@pytest.mark.parametrize(("sets", "complaint"), [
    ({"replicaCount": "three"}, "replicaCount"),
    ({"replicas": "3"}, "replicas"),
    ({"worker.restPort": "http"}, "restPort"),
    ({"probes.liveness.path": "health"}, "path"),
    ({"connectors.bad name.config.connector\\.class": "x"}, "'bad name' does not match pattern"),
    ({"connectors.c1.config.topic\\.prefix": "x"}, "connector.class"),
    ({"secrets.Mongo_DB.existingSecret": "x"}, "'Mongo_DB' does not match pattern"),
    ({"autoscaling.enabled": "yes please"}, "enabled"),
])
def test_values_schema_rejects_wrong_values(helm: Helm, sets: dict[str, str], complaint: str) -> None:
    error = helm.template_error(sets=sets)
    assert "values don't meet the specifications of the schema" in error
    assert complaint in error


def test_secret_without_data_or_reference_is_rejected(helm: Helm) -> None:
    error = helm.template_error(sets={"secrets.mongodb.existingSecret": ""})
    assert "secrets.mongodb needs existingSecret or stringData" in error


def test_grafana_dashboard_configmap(helm: Helm) -> None:
    from tests.helm.dashboard import DASHBOARD, parse, queries

    assert not [m for m in helm.template() if m["metadata"]["name"] == "cdc-pyconnect-dashboard"]
    manifests = helm.template(sets={"metrics.grafanaDashboard.enabled": "true",
                                    "metrics.grafanaDashboard.labels.team": "data"})
    configmap = find(manifests, "ConfigMap", "cdc-pyconnect-dashboard")
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert configmap["metadata"]["labels"]["team"] == "data"
    dashboard = json.loads(configmap["data"]["pyconnect.json"])
    assert dashboard == json.loads(DASHBOARD.read_text())
    titles = {p["title"] for p in dashboard["panels"] if p["type"] == "row"}
    assert titles == {"Cluster", "Connectors and tasks", "Throughput", "Lag", "Snapshot", "Errors"}
    for title, expr in queries(dashboard):
        parse(expr)  # valid PromQL once Grafana's variables are given values
        assert title
