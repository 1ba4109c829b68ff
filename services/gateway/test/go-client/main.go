// Both halves of the API through a Go client generated from our own OpenAPI document by
// oapi-codegen, the way an integrator would use it: a check that is told apart by its
// discriminator (an offer, or why not), a status report with a detail object, and a second check;
// an upload whose manifest is the document's Manifest type, a page of devices by an integer limit,
// tokens whose role is a nullable enum, and a transition that names the version it saw. Run by
// go-client.int.test.ts with the generated package beside it; prints one JSON line of what it saw.
//
// Usage: go run . <gateway url> <device-scope token> <device id> <personal token> <project id>
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"

	"github.com/google/uuid"

	"otaflow/otaclient"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// check asks for an update and answers the discriminator's value with the offer, if it is one.
func check(client *otaclient.ClientWithResponses, auth otaclient.RequestEditorFn, deviceID string, current int) (string, *otaclient.CheckOffer) {
	answer, err := client.CheckForUpdateWithResponse(context.Background(), otaclient.CheckForUpdateJSONRequestBody{
		DeviceId:           &deviceID,
		Framework:          "esp_idf",
		ChipFamily:         "esp32",
		CurrentBuildNumber: current,
	}, auth)
	if err != nil || answer.JSON200 == nil {
		fail("check: %v %s", err, string(answer.Body))
	}
	status, err := answer.JSON200.Discriminator()
	if err != nil {
		fail("check: no discriminator: %v", err)
	}
	if status != "offered" {
		noUpdate, err := answer.JSON200.AsCheckNoUpdate()
		if err != nil || string(noUpdate.Status) != status {
			fail("check: %q is not a no-update answer: %v", status, err)
		}
		return status, nil
	}
	offer, err := answer.JSON200.AsCheckOffer()
	if err != nil || offer.Url == "" {
		fail("check: an offer without a url: %v", err)
	}
	return status, &offer
}

func main() {
	if len(os.Args) != 6 {
		fail("usage: go run . <gateway url> <device-scope token> <device id> <personal token> <project id>")
	}
	server, token, deviceID, personalToken, projectID := os.Args[1], os.Args[2], os.Args[3], os.Args[4], uuid.MustParse(os.Args[5])
	client, err := otaclient.NewClientWithResponses(server)
	if err != nil {
		fail("client: %v", err)
	}
	auth := func(_ context.Context, request *http.Request) error {
		request.Header.Set("Authorization", "Bearer "+token)
		return nil
	}

	first, offer := check(client, auth, deviceID, 0)
	if offer == nil {
		fail("first check: %s, not an offer", first)
	}

	// A detail object of a string, a number and a flag: the JSON values the document allows.
	attempt, flag, note := otaclient.ReportStatusJSONBody_Detail_AdditionalProperties{}, otaclient.ReportStatusJSONBody_Detail_AdditionalProperties{}, otaclient.ReportStatusJSONBody_Detail_AdditionalProperties{}
	if err := attempt.FromReportStatusJSONBodyDetail1(2); err != nil {
		fail("detail: %v", err)
	}
	if err := flag.FromReportStatusJSONBodyDetail2(true); err != nil {
		fail("detail: %v", err)
	}
	if err := note.FromReportStatusJSONBodyDetail0("from go"); err != nil {
		fail("detail: %v", err)
	}
	detail := map[string]*otaclient.ReportStatusJSONBody_Detail_AdditionalProperties{"attempt": &attempt, "resumed": &flag, "note": &note}
	build := offer.BuildNumber
	reported, err := client.ReportStatusWithResponse(context.Background(), otaclient.ReportStatusJSONRequestBody{
		DeviceId:     &deviceID,
		DeploymentId: offer.DeploymentId,
		Event:        "confirmed",
		BuildNumber:  &build,
		Detail:       &detail,
	}, auth)
	if err != nil || reported.JSON200 == nil {
		fail("report: %v %s", err, string(reported.Body))
	}

	second, _ := check(client, auth, deviceID, build)

	person := func(_ context.Context, request *http.Request) error {
		request.Header.Set("Authorization", "Bearer "+personalToken)
		return nil
	}
	uploaded := upload(client, person, projectID)
	devices, err := client.ListDevicesWithResponse(context.Background(), projectID, &otaclient.ListDevicesParams{Limit: ptr(1)}, person)
	if err != nil || devices.JSON200 == nil {
		fail("devices: %v %s", err, string(devices.Body))
	}
	tokens, err := client.ListProjectTokensWithResponse(context.Background(), projectID, person)
	if err != nil || tokens.JSON200 == nil {
		fail("tokens: %v %s", err, string(tokens.Body))
	}
	roles := map[string]any{}
	for _, listed := range *tokens.JSON200 {
		if listed.Role == nil {
			roles[listed.Name] = nil
		} else {
			roles[listed.Name] = string(*listed.Role)
		}
	}
	// A transition that names the version it saw, as the document types it: the version, bare.
	deployment, err := client.GetDeploymentWithResponse(context.Background(), projectID, offer.DeploymentId, person)
	if err != nil || deployment.JSON200 == nil {
		fail("deployment: %v %s", err, string(deployment.Body))
	}
	seenVersion := fmt.Sprint(deployment.JSON200.Version)
	paused, err := client.TransitionDeploymentWithResponse(context.Background(), projectID, offer.DeploymentId, &otaclient.TransitionDeploymentParams{IfMatch: &seenVersion}, otaclient.TransitionDeploymentJSONRequestBody{Action: otaclient.Pause}, person)
	if err != nil || paused.JSON200 == nil {
		fail("pause: %v %s", err, string(paused.Body))
	}
	stale, err := client.TransitionDeploymentWithResponse(context.Background(), projectID, offer.DeploymentId, &otaclient.TransitionDeploymentParams{IfMatch: &seenVersion}, otaclient.TransitionDeploymentJSONRequestBody{Action: otaclient.Resume}, person)
	if err != nil {
		fail("resume: %v", err)
	}

	seen, _ := json.Marshal(map[string]any{
		"first":          first,
		"build":          build,
		"accepted":       reported.JSON200.Accepted,
		"final_status":   reported.JSON200.FinalStatus,
		"second":         second,
		"uploaded":       map[string]any{"version_label": uploaded.VersionLabel, "framework": uploaded.Framework, "board_id": uploaded.BoardId, "file_size": uploaded.FileSize},
		"devices_listed": len(*devices.JSON200),
		"token_roles":    roles,
		"paused":         string(paused.JSON200.State),
		"stale_resume":   stale.StatusCode(),
	})
	fmt.Println(string(seen))
}

func ptr[T any](value T) *T { return &value }

// upload sends a build as the document describes the form: the manifest part is the Manifest type
// as JSON (oapi-codegen leaves the multipart body to the caller), then the binary.
func upload(client *otaclient.ClientWithResponses, auth otaclient.RequestEditorFn, projectID uuid.UUID) *otaclient.Artifact {
	manifest, err := json.Marshal(otaclient.Manifest{VersionLabel: "9.9.9-go", Framework: otaclient.ManifestFramework("esp_idf"), ChipFamily: "esp32", BoardId: ptr("go-board")})
	if err != nil {
		fail("manifest: %v", err)
	}
	var body bytes.Buffer
	form := multipart.NewWriter(&body)
	header := textproto.MIMEHeader{}
	header.Set("Content-Disposition", `form-data; name="manifest"`)
	header.Set("Content-Type", "application/json")
	part, err := form.CreatePart(header)
	if err == nil {
		_, err = part.Write(manifest)
	}
	if err == nil {
		part, err = form.CreateFormFile("binary", "firmware.bin")
	}
	if err == nil {
		_, err = part.Write(bytes.Repeat([]byte{0x5a}, 4096))
	}
	if err == nil {
		err = form.Close()
	}
	if err != nil {
		fail("form: %v", err)
	}
	answer, err := client.UploadArtifactWithBodyWithResponse(context.Background(), projectID, &otaclient.UploadArtifactParams{}, form.FormDataContentType(), &body, auth)
	if err != nil || answer.JSON201 == nil {
		fail("upload: %v %s", err, string(answer.Body))
	}
	return answer.JSON201
}
