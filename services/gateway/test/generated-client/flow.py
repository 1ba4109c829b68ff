"""The whole flow of the API through a Python client generated from our own OpenAPI document
(openapi-python-client), the way an integrator would use it: project, tokens, group, channel,
upload, a deployment with guardrails, start, check, download, every status to confirmed, summary,
events, audit, webhooks. Run by generated-client.int.test.ts with the generated package on
sys.path; a call the generated client cannot express fails here. Prints one JSON line of what it saw.

Usage: python flow.py <gateway url> <personal token> <webhook receiver url>
"""
import hashlib
import io
import json
import os
import sys
from urllib.parse import parse_qs, urlparse

from ota_client import AuthenticatedClient
from ota_client.api.artifacts import upload_artifact
from ota_client.api.deployments import create_deployment, get_deployment_summary, transition_deployment
from ota_client.api.device_api import check_for_update, download_artifact, report_status
from ota_client.api.devices import list_device_events, list_devices
from ota_client.api.groups_and_channels import add_group_member, create_channel, create_group
from ota_client.api.projects import create_project, list_audit_events
from ota_client.api.tokens import create_project_token
from ota_client.api.webhooks import create_webhook, list_webhook_deliveries, list_webhooks
from ota_client.models import (
    AddGroupMemberBody,
    ArtifactManifest,
    ArtifactManifestFramework,
    CheckForUpdateBody,
    CheckForUpdateBodyFramework,
    CreateChannelBody,
    CreateDeploymentBody,
    CreateDeploymentBodyGuardrails,
    CreateDeploymentBodyGuardrailsFailureThreshold,
    CreateDeploymentBodyGuardrailsReasonLimitsItem,
    CreateGroupBody,
    CreateProjectBody,
    CreateProjectTokenBody,
    CreateProjectTokenBodyScope,
    CreateWebhookBody,
    CreateWebhookBodyEventsItem,
    ReportStatusBody,
    ReportStatusBodyEvent,
    TransitionDeploymentBody,
    TransitionDeploymentBodyAction,
    Role,
    UploadArtifactBody,
)
from ota_client.types import File

base_url, personal_token, receiver_url = sys.argv[1:4]
seen = {}


def expect(response, status, what):
    """The answer must have `status`; returns what the generated client parsed."""
    if response.status_code != status:
        raise SystemExit(f"{what}: expected {status}, got {response.status_code}: {response.content[:300]!r}")
    return response.parsed


developer = AuthenticatedClient(base_url=base_url, token=personal_token, raise_on_unexpected_status=True)
project = expect(create_project.sync_detailed(client=developer, body=CreateProjectBody(name="generated client")), 201, "create project")
fleet_token = expect(
    create_project_token.sync_detailed(project.id, client=developer, body=CreateProjectTokenBody(name="fleet", scope=CreateProjectTokenBodyScope.DEVICE)),
    201,
    "create a device token",
)
group = expect(create_group.sync_detailed(project.id, client=developer, body=CreateGroupBody(name="canary")), 201, "create group")
expect(create_channel.sync_detailed(project.id, client=developer, body=CreateChannelBody(name="beta")), 201, "create channel")

device = AuthenticatedClient(base_url=base_url, token=fleet_token.token, raise_on_unexpected_status=True)
check_body = CheckForUpdateBody(device_id="py-1", framework=CheckForUpdateBodyFramework.ESP_IDF, chip_family="esp32", current_build_number=0)
first = check_for_update.sync_detailed(client=device, body=check_body)
expect(first, 200, "first check")
seen["first_check"] = json.loads(first.content)["status"]
devices = expect(list_devices.sync_detailed(project.id, client=developer), 200, "list devices")
device_uuid = next(d.id for d in devices if d.device_id == "py-1")
expect(add_group_member.sync_detailed(project.id, group.id, client=developer, body=AddGroupMemberBody(device_id=device_uuid)), 201, "add member")

image = os.urandom(70_000)
manifest = ArtifactManifest(version_label="1.0.0", framework=ArtifactManifestFramework.ESP_IDF, chip_family="esp32")
artifact = expect(
    upload_artifact.sync_detailed(project.id, client=developer, body=UploadArtifactBody(manifest=manifest, binary=File(payload=io.BytesIO(image), file_name="fw.bin"))),
    201,
    "upload",
)
guardrails = CreateDeploymentBodyGuardrails(
    failure_threshold=CreateDeploymentBodyGuardrailsFailureThreshold(percent=50, min_finished=5),
    reason_limits=[CreateDeploymentBodyGuardrailsReasonLimitsItem(reason="signature_invalid", count=3, window_seconds=600)],
)
deployment = expect(
    create_deployment.sync_detailed(project.id, client=developer, body=CreateDeploymentBody(artifact_id=artifact.id, target_group_ids=[group.id], guardrails=guardrails)),
    201,
    "create deployment",
)
expect(
    transition_deployment.sync_detailed(project.id, deployment.id, client=developer, body=TransitionDeploymentBody(action=TransitionDeploymentBodyAction.START)),
    200,
    "start",
)

checked = check_for_update.sync_detailed(client=device, body=check_body)
expect(checked, 200, "check after start")
offer = json.loads(checked.content)
if not offer.get("update_available"):
    raise SystemExit(f"check after start: no offer: {offer}")
url = urlparse(offer["url"])
query = {key: values[0] for key, values in parse_qs(url.query).items()}
download = download_artifact.sync_detailed(
    url.path.rsplit("/", 1)[-1],
    client=device,
    size=int(query["size"]),
    sha256=query["sha256"],
    deployment=query["deployment"],
    device=query["device"],
    token=query["token"],
    expires=int(query["expires"]),
    signature=query["signature"],
)
if download.status_code != 200 or hashlib.sha256(download.content).hexdigest() != offer["checksum"]:
    raise SystemExit(f"download: {download.status_code}, {len(download.content)} bytes")
seen["downloaded_bytes"] = len(download.content)

finals = []
for event in ["offered", "download_started", "downloaded", "flashed", "validated", "reboot", "confirmed"]:
    body = ReportStatusBody(deployment_id=deployment.id, event=ReportStatusBodyEvent(event), device_id="py-1")
    if event == "confirmed":
        body.build_number = offer["build_number"]
    finals.append(expect(report_status.sync_detailed(client=device, body=body), 200, f"report {event}").final_status)
seen["final_statuses"] = finals

summary = expect(get_deployment_summary.sync_detailed(project.id, deployment.id, client=developer), 200, "summary")
seen["confirmed_in_summary"] = summary.devices_by_status.confirmed
events = expect(list_device_events.sync_detailed(project.id, device_uuid, client=developer), 200, "device events")
seen["device_events"] = [e.event for e in reversed(events)]
audit = expect(list_audit_events.sync_detailed(project.id, client=developer, limit=500), 200, "audit")
seen["audit_actions"] = sorted({a.action for a in audit})
# A nullable enum is one type, or None: the owner's personal token acts as admin.
seen["audit_roles"] = sorted({"none" if a.actor_role is None else a.actor_role.value for a in audit})
seen["roles_are_one_type"] = all(a.actor_role is None or isinstance(a.actor_role, Role) for a in audit)

webhook = expect(
    create_webhook.sync_detailed(project.id, client=developer, body=CreateWebhookBody(url=receiver_url, events=[CreateWebhookBodyEventsItem.DEPLOYMENT_PAUSED])),
    201,
    "create webhook",
)
seen["webhook_secret_shown"] = bool(webhook.secret)
seen["webhooks_listed"] = len(expect(list_webhooks.sync_detailed(project.id, client=developer), 200, "list webhooks"))
expect(
    transition_deployment.sync_detailed(project.id, deployment.id, client=developer, body=TransitionDeploymentBody(action=TransitionDeploymentBodyAction.PAUSE)),
    200,
    "pause",
)
deliveries = list_webhook_deliveries.sync_detailed(project.id, webhook.id, client=developer)
seen["deliveries_status"] = deliveries.status_code
print(json.dumps(seen))
