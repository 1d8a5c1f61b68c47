{{/*
Every template under templates/ mirrors the file of the same path under manifests/ (the
kustomization): with default values and release namespace gpustack-system, `helm template`
gives the same objects, apart from the labels below. test/e2e/helm.e2e.test.ts checks it.
Names are fixed, as in manifests/: the controllers, the ClusterRoles and the SchedulingChain
`default` exist once per cluster, so is this release.
*/}}

{{/* Helm's standard labels: the only difference from manifests/, on every object's own metadata. */}}
{{- define "gpustack-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The one image (serve | agent | admission): repository, then @digest, else :tag (default appVersion). */}}
{{- define "gpustack-operator.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* image, imagePullPolicy (only when set: Kubernetes' default otherwise). Indent: a container's keys. */}}
{{- define "gpustack-operator.containerImage" -}}
image: {{ include "gpustack-operator.image" . }}
{{- with .Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end }}

{{/* Pod-level pull secrets and scheduling of one component, (list $ .Values.<component>); empty when none is set. */}}
{{- define "gpustack-operator.podScheduling" -}}
{{- $root := index . 0 -}}
{{- $component := index . 1 -}}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $component.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $component.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $component.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* Base URL of the hook server for Metacontroller: the Service's hook port in the release namespace (https unless hooks.tls.enabled=false), or controllers.hookBaseURL. */}}
{{- define "gpustack-operator.hookBaseURL" -}}
{{- if .Values.controllers.hookBaseURL -}}
{{ trimSuffix "/" .Values.controllers.hookBaseURL }}
{{- else -}}
{{ ternary "https" "http" .Values.hooks.tls.enabled }}://gpustack-operator.{{ .Release.Namespace }}.svc:8443
{{- end -}}
{{- end }}

{{/*
What Metacontroller (v4.16 or later) needs to call a hook, after its url: the CA that verifies the
hook server, the bearer token and the client certificate it sends, each from a Secret of the
release (hook-credentials.yaml). Metacontroller reads them when a controller is created or changed.
Indent: a webhook's keys.
*/}}
{{- define "gpustack-operator.hookCredentials" -}}
{{- if .Values.hooks.tls.enabled }}
caBundle:
  secretRef:
    name: gpustack-operator-hooks-tls
    namespace: {{ .Release.Namespace }}
    key: ca.crt
{{- end }}
{{- if .Values.hooks.auth.bearerToken }}
authorization:
  secretRef:
    name: gpustack-operator-hooks-token
    namespace: {{ .Release.Namespace }}
    key: token
{{- end }}
{{- if .Values.hooks.auth.clientCertificate }}
clientTLS:
  secretRef:
    name: gpustack-operator-hooks-client
    namespace: {{ .Release.Namespace }}
{{- end }}
{{- end }}
