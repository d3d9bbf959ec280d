{{/* Names and labels shared by every template. */}}

{{- define "pyconnect.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "pyconnect.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "pyconnect.headless" -}}
{{- printf "%s-workers" (include "pyconnect.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "pyconnect.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pyconnect.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "pyconnect.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "pyconnect.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: pyconnect
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "pyconnect.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "pyconnect.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "pyconnect.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "pyconnect.groupId" -}}
{{- default (include "pyconnect.fullname" .) .Values.worker.groupId -}}
{{- end -}}

{{/* The REST URL of the cluster, as seen from inside it. */}}
{{- define "pyconnect.restUrl" -}}
{{- printf "http://%s.%s.svc:%v" (include "pyconnect.fullname" .) .Release.Namespace .Values.service.port -}}
{{- end -}}

{{/* Seconds: the task shutdown timeout plus 30 s for offsets and the group to settle, or the value given. */}}
{{- define "pyconnect.terminationGracePeriodSeconds" -}}
{{- $taskSeconds := divf (float64 .Values.worker.taskShutdownGracefulTimeoutMs) 1000.0 | ceil | int -}}
{{- if kindIs "invalid" .Values.terminationGracePeriodSeconds -}}
{{- add $taskSeconds 30 -}}
{{- else -}}
{{- if le (int .Values.terminationGracePeriodSeconds) $taskSeconds -}}
{{- fail (printf "terminationGracePeriodSeconds (%v) must exceed worker.taskShutdownGracefulTimeoutMs (%v ms)" .Values.terminationGracePeriodSeconds .Values.worker.taskShutdownGracefulTimeoutMs) -}}
{{- end -}}
{{- int .Values.terminationGracePeriodSeconds -}}
{{- end -}}
{{- end -}}

{{- define "pyconnect.probe" -}}
{{- $probe := index . 0 -}}
{{- $kind := index . 1 -}}
{{- if eq (default "http" $probe.type) "tcp" }}
tcpSocket:
  port: http
{{- else }}
httpGet:
  path: {{ $probe.path }}
  port: http
{{- end }}
{{- if $probe.initialDelaySeconds }}
initialDelaySeconds: {{ $probe.initialDelaySeconds }}
{{- end }}
periodSeconds: {{ $probe.periodSeconds }}
timeoutSeconds: {{ $probe.timeoutSeconds }}
failureThreshold: {{ $probe.failureThreshold }}
{{- if eq $kind "readiness" }}
successThreshold: {{ default 1 $probe.successThreshold }}
{{- end }}
{{- end -}}

{{/* A value as a Java properties file holds it: whole numbers without exponent, backslashes and newlines escaped. */}}
{{- define "pyconnect.propertyValue" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) -}}
{{- int64 . -}}
{{- else -}}
{{- toString . | replace "\\" "\\\\" | replace "\n" "\\n" -}}
{{- end -}}
{{- end -}}

{{/*
The CONNECT_* environment variable of a worker property, as the Confluent image reads it back
(_ for ., __ for _, ___ for -).
*/}}
{{- define "pyconnect.envName" -}}
{{- printf "CONNECT_%s" (. | replace "_" "__" | replace "-" "___" | replace "." "_" | upper) -}}
{{- end -}}

{{/*
A worker property's value as an environment variable: whole numbers without an exponent, the rest as text.
*/}}
{{- define "pyconnect.envValue" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) -}}
{{- int64 . -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}
