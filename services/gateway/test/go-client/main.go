// The device half of the API through a Go client generated from our own OpenAPI document by
// oapi-codegen, the way an integrator would use it: a check that is told apart by its
// discriminator (an offer, or why not), a status report with a detail object, and a second check.
// Run by go-client.int.test.ts with the generated package beside it; prints one JSON line of what
// it saw.
//
// Usage: go run . <gateway url> <device-scope token> <device id>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

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
	if len(os.Args) != 4 {
		fail("usage: go run . <gateway url> <device-scope token> <device id>")
	}
	server, token, deviceID := os.Args[1], os.Args[2], os.Args[3]
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
	seen, _ := json.Marshal(map[string]any{
		"first":        first,
		"build":        build,
		"accepted":     reported.JSON200.Accepted,
		"final_status": reported.JSON200.FinalStatus,
		"second":       second,
	})
	fmt.Println(string(seen))
}
