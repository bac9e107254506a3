{{/*
The install namespace. The CRDs' conversion webhook (crds/, not templated) names Service flotilla-webhook
in flotilla-system, so the chart can only work there. Checked when installing or upgrading (and by
`helm template`, which renders as an install); `helm lint` renders without either and is not stopped.
Agent mode (agent.enabled) is not checked: it runs no webhook, and nothing of it names flotilla-system.
*/}}
{{- define "flotilla.namespace" -}}
{{- if and (or .Release.IsInstall .Release.IsUpgrade) (ne .Release.Namespace "flotilla-system") (not .Values.agent.enabled) -}}
{{- fail (printf "flotilla must be installed in namespace flotilla-system, not %q: the CRDs' conversion webhook calls Service flotilla-webhook in flotilla-system. Use --namespace flotilla-system (with --create-namespace if it does not exist)." .Release.Namespace) -}}
{{- end -}}
{{- .Release.Namespace -}}
{{- end -}}

{{/* Labels on every object. No managed-by/chart labels: deploy/ is this chart rendered for kubectl. */}}
{{- define "flotilla.labels" -}}
app.kubernetes.io/part-of: flotilla
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* Labels of one component; the selector uses the name label only, so it never changes on upgrade. */}}
{{- define "flotilla.componentLabels" -}}
app.kubernetes.io/name: flotilla-{{ .component }}
app.kubernetes.io/component: {{ .component }}
{{ include "flotilla.labels" .root }}
{{- end -}}

{{/* The image every container runs: repository:tag, or repository@digest when a digest is given. */}}
{{- define "flotilla.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* Pod-level security settings shared by every pod: the image's non-root user, RuntimeDefault seccomp. */}}
{{- define "flotilla.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Container-level security settings shared by every container. */}}
{{- define "flotilla.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{/* Webhook Service DNS names, as `flotilla certs create` writes them into its certificate. */}}
{{- define "flotilla.webhookDNSNames" -}}
{{- $ns := include "flotilla.namespace" . -}}
- flotilla-webhook
- flotilla-webhook.{{ $ns }}
- flotilla-webhook.{{ $ns }}.svc
- flotilla-webhook.{{ $ns }}.svc.cluster.local
{{- end -}}

{{/* The CRDs with a conversion webhook, whose caBundle `flotilla certs patch` sets (api/crds CONVERTIBLE_CRD_NAMES). */}}
{{- define "flotilla.convertibleCRDs" -}}
{{- list "propagationpolicies.policy.flotilla.io" "clusterpropagationpolicies.policy.flotilla.io" "overridepolicies.policy.flotilla.io" "clusteroverridepolicies.policy.flotilla.io" | toJson -}}
{{- end -}}

{{/*
Annotations of the certgen RBAC. Hooks, so they exist while the certgen Jobs (also hooks) run: created
before each Job (lower weight) in both hook phases, and deleted once the phase's hooks succeeded.
*/}}
{{- define "flotilla.certgenHook" -}}
helm.sh/hook: pre-install,pre-upgrade,post-install,post-upgrade
helm.sh/hook-weight: "-5"
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}

{{/* Pod settings of both certgen Jobs. */}}
{{- define "flotilla.certgenPod" -}}
serviceAccountName: flotilla-certgen
restartPolicy: OnFailure
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- include "flotilla.podSecurityContext" . | nindent 2 }}
{{- end }}

{{/*
A container's command, given its nodeFlags (agent.nodeFlags, controller.nodeFlags): with flags, the image's
node with them (V8 flags NODE_OPTIONS cannot carry), then the image's program; without, the `flotilla`
launcher with node's defaults.
*/}}
{{- define "flotilla.command" -}}
{{- if . -}}
command:
  - /nodejs/bin/node
  {{- range . }}
  - {{ . | quote }}
  {{- end }}
  - /app/dist/cmd/flotilla/main.js
{{- else -}}
command: ["flotilla"]
{{- end }}
{{- end }}
