{{/* Names are <release>-<chart>-<component>, cut to fit the 63-character limit of a label value. */}}
{{- define "ota.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{- define "ota.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The labels that select one component's pods. Arguments: root, name. */}}
{{- define "ota.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/* The Secret the pods read: the user's own (secrets.existingSecret) or the chart's. */}}
{{- define "ota.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "ota.fullname" .) -}}
{{- end -}}

{{/* A component's image: its own `image` value when set (skaffold sets it; a digest goes there), else composed. */}}
{{- define "ota.image" -}}
{{- .values.image | default (printf "%s/%s-%s:%s" .root.Values.image.registry .root.Values.image.repository .name .root.Values.image.tag) -}}
{{- end -}}

{{/* Ports: the gateway serves HTTP on 8080, each service gRPC on its own port; metrics on 9100. */}}
{{- define "ota.port" -}}
{{- get (dict "gateway" 8080 "registry" 50051 "artifacts" 50052 "rollout" 50053 "telemetry" 50054) . -}}
{{- end -}}

{{- define "ota.address" -}}
{{- printf "%s-%s:%s" (include "ota.fullname" .root) .name (include "ota.port" .name) -}}
{{- end -}}

{{/* Environment every container of the release gets: shared config, and the secrets it needs. */}}
{{- define "ota.commonEnv" -}}
- name: MONGODB_URI
  valueFrom: { secretKeyRef: { name: {{ include "ota.secretName" . }}, key: mongodb-uri } }
- { name: METRICS_PORT, value: "9100" }
{{- end -}}

{{/* Annotations that roll the pods when the configuration or the chart's Secret changes. */}}
{{- define "ota.checksums" -}}
checksum/config: {{ include (print .Template.BasePath "/config.yaml") . | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end -}}

{{/*
One component: ServiceAccount, Deployment, Service, PodDisruptionBudget, HorizontalPodAutoscaler
and NetworkPolicy. Arguments: root (the chart context), name, values (the component's values),
env (its own env entries). The gateway serves HTTP and is probed on /readyz and /healthz; the
services serve gRPC and are probed with the standard gRPC health service.
*/}}
{{- define "ota.component" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $values := .values -}}
{{- $fullname := printf "%s-%s" (include "ota.fullname" $root) $name -}}
{{- $port := include "ota.port" $name | int -}}
{{- $portName := ternary "http" "grpc" (eq $name "gateway") -}}
{{- $selector := include "ota.selectorLabels" (dict "root" $root "name" $name) -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "ota.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
  {{- with $root.Values.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
# No process of the release talks to the Kubernetes API.
automountServiceAccountToken: false
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "ota.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  {{- if not $values.autoscaling.enabled }}
  replicas: {{ $values.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate: { maxSurge: 1, maxUnavailable: 0 }
  selector:
    matchLabels:
      {{- $selector | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "ota.labels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ $name }}
      annotations:
        {{- include "ota.checksums" $root | nindent 8 }}
        {{- with $values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ $fullname }}
      automountServiceAccountToken: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      # Long enough for SHUTDOWN_GRACE_MS (10 s) of in-flight work plus the NATS drain.
      terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
      {{- if $root.Values.topologySpread.enabled }}
      topologySpreadConstraints:
        {{- range $key := list "topology.kubernetes.io/zone" "kubernetes.io/hostname" }}
        - maxSkew: {{ $root.Values.topologySpread.maxSkew }}
          topologyKey: {{ $key }}
          whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
          labelSelector:
            matchLabels:
              {{- $selector | nindent 14 }}
          matchLabelKeys: [pod-template-hash]
        {{- end }}
      {{- end }}
      {{- with $values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ $name }}
          image: {{ include "ota.image" (dict "root" $root "name" $name "values" $values) | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - { name: {{ $portName }}, containerPort: {{ $port }}, protocol: TCP }
            - { name: metrics, containerPort: 9100, protocol: TCP }
          envFrom:
            - configMapRef: { name: {{ include "ota.fullname" $root }}-config }
          env:
            {{- include "ota.commonEnv" $root | nindent 12 }}
            # V8's heap from the component's nodeHeap, not from the node's memory (values.yaml).
            - name: NODE_OPTIONS
              value: "--max-old-space-size={{ $values.nodeHeap.oldSpaceMiB }} --max-semi-space-size={{ $values.nodeHeap.semiSpaceMiB }}"
            {{- with .env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          {{- if eq $name "gateway" }}
          startupProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 2
            failureThreshold: 60
          readinessProbe:
            httpGet: { path: /readyz, port: http }
            periodSeconds: 5
            failureThreshold: 2
          livenessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 10
            failureThreshold: 6
          {{- else }}
          startupProbe:
            grpc: { port: {{ $port }} }
            periodSeconds: 2
            failureThreshold: 60
          readinessProbe:
            grpc: { port: {{ $port }} }
            periodSeconds: 5
            failureThreshold: 2
          livenessProbe:
            grpc: { port: {{ $port }} }
            periodSeconds: 10
            failureThreshold: 6
          {{- end }}
          lifecycle:
            # Keep serving while the endpoint removal reaches every proxy, then drain on SIGTERM.
            preStop:
              exec: { command: ["sleep", "{{ $root.Values.preStopSleepSeconds }}"] }
          resources:
            {{- toYaml $values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - { name: tmp, mountPath: /tmp }
      volumes:
        # The root filesystem is read-only; /tmp is the one writable place.
        - name: tmp
          emptyDir: { sizeLimit: {{ $values.tmpSizeLimit | default "64Mi" }} }
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "ota.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  type: {{ if eq $name "gateway" }}{{ $values.service.type }}{{ else }}ClusterIP{{ end }}
  selector:
    {{- $selector | nindent 4 }}
  ports:
    - name: {{ $portName }}
      port: {{ if eq $name "gateway" }}{{ $values.service.port }}{{ else }}{{ $port }}{{ end }}
      targetPort: {{ $portName }}
      protocol: TCP
      {{- if eq $portName "grpc" }}
      appProtocol: grpc
      {{- end }}
    - { name: metrics, port: 9100, targetPort: metrics, protocol: TCP }
{{- if $values.pdb.enabled }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "ota.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  maxUnavailable: {{ $values.pdb.maxUnavailable }}
  selector:
    matchLabels:
      {{- $selector | nindent 6 }}
{{- end }}
{{- if $values.autoscaling.enabled }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "ota.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  scaleTargetRef: { apiVersion: apps/v1, kind: Deployment, name: {{ $fullname }} }
  minReplicas: {{ $values.autoscaling.minReplicas }}
  maxReplicas: {{ $values.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target: { type: Utilization, averageUtilization: {{ $values.autoscaling.targetCPUUtilizationPercentage }} }
{{- end }}
{{- if $root.Values.networkPolicy.enabled }}
---
# Ingress to this component: {{ if eq $name "gateway" }}the API from the allowed peers{{ else }}gRPC only from pods of this release{{ end }}, metrics from the monitoring peers.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "ota.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  podSelector:
    matchLabels:
      {{- $selector | nindent 6 }}
  policyTypes: [Ingress]
  ingress:
    - ports:
        - { port: {{ $portName }}, protocol: TCP }
      {{- if eq $name "gateway" }}
      {{- with $root.Values.networkPolicy.gatewayFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- else }}
      from:
        - podSelector:
            matchLabels:
              app.kubernetes.io/name: {{ $root.Chart.Name }}
              app.kubernetes.io/instance: {{ $root.Release.Name }}
      {{- end }}
    {{- with $root.Values.networkPolicy.metricsFrom }}
    - ports:
        - { port: metrics, protocol: TCP }
      from:
        {{- toYaml . | nindent 8 }}
    {{- end }}
{{- end }}
{{- end -}}

{{/* One service's migration container in the hook Job. Arguments: root, name. */}}
{{- define "ota.migrationContainer" -}}
- name: migrate-{{ .name }}
  image: {{ include "ota.image" (dict "root" .root "name" .name "values" (index .root.Values .name)) | quote }}
  imagePullPolicy: {{ .root.Values.image.pullPolicy }}
  command: ["node", "dist/migrate.js"]
  envFrom:
    - configMapRef: { name: {{ include "ota.fullname" .root }}-config }
  env:
    {{- include "ota.commonEnv" .root | nindent 4 }}
  resources:
    {{- toYaml .root.Values.migrations.resources | nindent 4 }}
  securityContext:
    {{- toYaml .root.Values.containerSecurityContext | nindent 4 }}
  volumeMounts:
    - { name: tmp, mountPath: /tmp }
{{- end -}}

{{/* The gateway's PUBLIC_BASE_URL: set, or made from the Ingress host; never left to a request's Host. */}}
{{- define "ota.publicBaseUrl" -}}
{{- if .Values.gateway.publicBaseUrl -}}
{{- .Values.gateway.publicBaseUrl -}}
{{- else if .Values.ingress.enabled -}}
{{- printf "%s://%s" (ternary "https" "http" .Values.ingress.tls.enabled) .Values.ingress.host -}}
{{- else if .Values.gateway.enabled -}}
{{- fail "gateway.publicBaseUrl is required (https://ota.example.com), or enable the Ingress with its host: download URLs must name the address devices reach, never one a request's Host header chooses" -}}
{{- end -}}
{{- end -}}
