import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as apps from "kubernetes-models/apps/v1";
import * as autoscaling from "kubernetes-models/autoscaling/v2";
import * as networking from "kubernetes-models/networking.k8s.io/v1";
import * as policy from "kubernetes-models/policy/v1";
import * as core from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

/**
 * deploy/kubernetes: every overlay as `kubectl kustomize` renders it (offline), each object checked
 * against the Kubernetes API schemas (kubernetes-models), and the properties the README promises.
 * kubectl comes from Debian's kubernetes-client, which `npm test`'s set-up (scripts/setup.sh)
 * installs; the YAML files themselves are checked too.
 */
const ROOT = join(import.meta.dirname, "../../deploy/kubernetes");
const OVERLAYS = readdirSync(join(ROOT, "overlays"));

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: manifests are checked against the schemas, not typed here
  spec?: any;
  data?: Record<string, string>;
}

function parseYaml(text: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((document) => {
    if (document.errors.length > 0) throw document.errors[0];
    const value = document.toJS() as K8sObject | null;
    return value ? [value] : [];
  });
}

function render(overlay: string): K8sObject[] {
  // stderr: newer kustomize warns that `bases` is deprecated (the overlays say why they keep it).
  const rendered = execFileSync("kubectl", ["kustomize", join(ROOT, "overlays", overlay)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return parseYaml(rendered);
}

/** Every manifest file of the tree; kustomization.yaml and *.patch.yaml (partial objects) are kustomize's input, not the API's. */
function manifestFiles(dir = ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return manifestFiles(path);
    return entry.name.endsWith(".yaml") && entry.name !== "kustomization.yaml" && !entry.name.endsWith(".patch.yaml")
      ? [path]
      : [];
  });
}

type ModelClass = new (data: unknown) => { validate(): void };
/** The API versions the manifests use, each with its kubernetes-models module (kind -> model class). */
const API_MODELS = {
  v1: core,
  "apps/v1": apps,
  "autoscaling/v2": autoscaling,
  "networking.k8s.io/v1": networking,
  "policy/v1": policy,
} as unknown as Record<string, Record<string, ModelClass> | undefined>;

/**
 * Checks an object against its API schema. cert-manager's kinds are custom resources that
 * kubernetes-models does not know, so their required fields are checked by hand instead.
 */
function validate(object: K8sObject): void {
  if (object.apiVersion === "cert-manager.io/v1") {
    expect(object.metadata.name).toBeTruthy();
    if (object.kind === "Certificate") {
      expect(object.spec.secretName, object.metadata.name).toMatch(/^[a-z0-9-]+$/);
      expect(object.spec.issuerRef.name, object.metadata.name).toBeTruthy();
      expect(Boolean(object.spec.commonName || object.spec.dnsNames?.length), object.metadata.name).toBe(true);
    } else {
      expect(object.kind).toBe("Issuer");
      expect(Object.keys(object.spec)).toHaveLength(1);
      expect(["selfSigned", "ca", "acme", "vault", "venafi"]).toContain(Object.keys(object.spec)[0]);
    }
    return;
  }
  const Model = API_MODELS[object.apiVersion]?.[object.kind];
  if (!Model) throw new Error(`${object.apiVersion} ${object.kind}: add its kubernetes-models module to API_MODELS`);
  new Model(object).validate();
}

function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  // kustomize names generated ConfigMaps name-<hash>.
  const found = objects.find(
    (o) => o.kind === kind && (o.metadata.name === name || o.metadata.name.startsWith(`${name}-`)),
  );
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
}

describe("Kubernetes manifests (deploy/kubernetes)", () => {
  it.each(manifestFiles().map((path) => [path.slice(ROOT.length + 1), path]))(
    "%s: every object is valid against its API schema",
    (_name, path) => {
      const objects = parseYaml(readFileSync(path, "utf8"));
      expect(objects.length).toBeGreaterThan(0);
      for (const object of objects) validate(object);
    },
  );

  describe.each(OVERLAYS)("overlay %s, rendered by kubectl kustomize", (overlay) => {
    const objects = render(overlay);

    it("renders objects that are all valid against their API schemas, in one namespace", () => {
      expect(objects.length).toBeGreaterThan(10);
      for (const object of objects) {
        validate(object);
        if (object.kind !== "Namespace") expect(object.metadata.namespace, object.metadata.name).toBe("browser-infra");
      }
    });

    it("runs at least two gateways, ready on /readyz, alive on /healthz, kept by a PDB and scaled on CPU", () => {
      const gateway = find(objects, "Deployment", "gateway");
      expect(gateway.spec.replicas).toBeGreaterThanOrEqual(2);
      const [container] = gateway.spec.template.spec.containers;
      expect(container.readinessProbe.httpGet.path).toBe("/readyz");
      expect(container.livenessProbe.httpGet.path).toBe("/healthz");
      expect(container.resources.requests.cpu).toBeTruthy();
      const pdb = find(objects, "PodDisruptionBudget", "gateway");
      expect(pdb.spec.selector.matchLabels).toEqual(gateway.spec.selector.matchLabels);
      const hpa = find(objects, "HorizontalPodAutoscaler", "gateway");
      expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: "Deployment", name: "gateway" });
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec.metrics[0].resource.name).toBe("cpu");
    });

    it("points HOST_AGENTS_DNS and AGENT_TLS_SERVER_NAME at the headless browser-host Service and its certificate", () => {
      const config = find(objects, "ConfigMap", "gateway").data ?? {};
      const service = find(objects, "Service", "browser-host");
      expect(service.spec.clusterIP).toBe("None");
      expect(config.HOST_AGENTS_DNS).toBe(`${service.metadata.name}:${service.spec.ports[0].port}`);
      expect(find(objects, "Certificate", "browser-host").spec.dnsNames).toContain(config.AGENT_TLS_SERVER_NAME);
      expect(config.PUBLIC_URL).toMatch(/^https?:\/\//);
    });

    it("mounts in each pod the Secret a Certificate issues, and takes DATABASE_URL and SECRETS_KEY from a Secret", () => {
      const issued = objects.filter((o) => o.kind === "Certificate").map((o) => o.spec.secretName);
      for (const name of ["gateway", "browser-host"]) {
        const pod = find(objects, "Deployment", name).spec.template.spec;
        const certs = pod.volumes.find((v: { name: string }) => v.name === "certs");
        expect(issued).toContain(certs.secret.secretName);
      }
      const env = find(objects, "Deployment", "gateway").spec.template.spec.containers[0].env;
      for (const variable of ["DATABASE_URL", "SECRETS_KEY"]) {
        expect(env.find((e: { name: string }) => e.name === variable).valueFrom.secretKeyRef.name).toBe("gateway");
      }
    });

    it("gives each browser host one agent, a sized /dev/shm, no root, a read-only root, and a grace above its drain", () => {
      const host = find(objects, "Deployment", "browser-host").spec.template.spec;
      expect(host.containers).toHaveLength(1);
      const [agent] = host.containers;
      expect(host.securityContext.runAsNonRoot).toBe(true);
      expect(agent.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      const shm = agent.volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/dev/shm");
      const shmVolume = host.volumes.find((v: { name: string }) => v.name === shm.name);
      expect(shmVolume.emptyDir).toMatchObject({ medium: "Memory", sizeLimit: expect.any(String) });
      expect(agent.resources.requests.memory).toBeTruthy();
      expect(agent.resources.limits.memory).toBeTruthy();
      const drainMs = Number(find(objects, "ConfigMap", "browser-host").data?.AGENT_DRAIN_TIMEOUT_MS);
      expect(drainMs).toBeGreaterThan(0);
      // The fence (end Chromium, wipe) and the exit need time after the drain, before SIGKILL.
      expect(host.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(drainMs + 30_000);
    });

    it("lets only gateways reach the agents, and the agents reach nothing in the cluster but DNS", () => {
      const policy = find(objects, "NetworkPolicy", "browser-host");
      expect(policy.spec.policyTypes).toEqual(["Ingress", "Egress"]);
      expect(policy.spec.ingress).toEqual([
        {
          from: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway" } } }],
          // gRPC, and the gateways' liveness probes on the same number over UDP.
          ports: [
            { protocol: "TCP", port: 50051 },
            { protocol: "UDP", port: 50051 },
          ],
        },
      ]);
      const [dns, outside] = policy.spec.egress;
      expect(dns.ports.map((p: { port: number }) => p.port)).toEqual([53, 53]);
      expect(dns.to[0].podSelector.matchLabels).toEqual({ "k8s-app": "kube-dns" });
      const except = outside.to.flatMap((to: { ipBlock: { except: string[] } }) => to.ipBlock.except);
      expect(except).toEqual(expect.arrayContaining(["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"]));
      expect(policy.spec.egress).toHaveLength(2);
    });
  });
});
