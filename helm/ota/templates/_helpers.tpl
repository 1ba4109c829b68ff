{{- define "ota.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "ota.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* A service's image: its own `image` value when set (skaffold sets it), else composed. */}}
{{- define "ota.image" -}}
{{- .values.image | default (printf "%s/%s-%s:%s" .root.Values.image.registry .root.Values.image.repository .name .root.Values.image.tag) -}}
{{- end -}}

{{/* The gRPC port and address of each service, shared by its own template and its callers. */}}
{{- define "ota.grpcPort" -}}
{{- get (dict "registry" 50051 "artifacts" 50052 "rollout" 50053 "telemetry" 50054) . -}}
{{- end -}}

{{/*
A service's Deployment and Service. Arguments: root (the chart context), name, values, and
extraEnv (a list of env entries).
*/}}
{{- define "ota.grpcService" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $fullname := printf "%s-%s" (include "ota.fullname" $root) $name -}}
{{- $port := include "ota.grpcPort" $name | int -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "ota.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  replicas: {{ .values.replicas }}
  selector:
    matchLabels:
      app.kubernetes.io/instance: {{ $root.Release.Name }}
      app.kubernetes.io/component: {{ $name }}
  template:
    metadata:
      labels:
        {{- include "ota.labels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ $name }}
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
      containers:
        - name: {{ $name }}
          image: {{ include "ota.image" (dict "root" $root "name" $name "values" .values) | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - { name: grpc, containerPort: {{ $port }} }
            - { name: metrics, containerPort: 9100 }
          env:
            - { name: GRPC_PORT, value: {{ $port | quote }} }
            - { name: METRICS_PORT, value: "9100" }
            - { name: NATS_URL, value: {{ $root.Values.nats.url | quote }} }
            - name: MONGODB_URI
              valueFrom: { secretKeyRef: { name: {{ include "ota.fullname" $root }}, key: mongodb-uri } }
            {{- with .extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          readinessProbe:
            grpc: { port: {{ $port }} }
            periodSeconds: 5
          livenessProbe:
            grpc: { port: {{ $port }} }
            periodSeconds: 10
            failureThreshold: 6
          resources:
            {{- toYaml .values.resources | nindent 12 }}
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities: { drop: ["ALL"] }
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "ota.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  selector:
    app.kubernetes.io/instance: {{ $root.Release.Name }}
    app.kubernetes.io/component: {{ $name }}
  ports:
    - { name: grpc, port: {{ $port }}, targetPort: grpc }
    - { name: metrics, port: 9100, targetPort: metrics }
{{- end -}}
