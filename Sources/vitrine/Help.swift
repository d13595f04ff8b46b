// The usage texts of `vitrine` and its commands (`vitrine <command> --help`). The man page,
// docs/vitrine.1.scd, says the same at more length: keep the two together.

let topHelp = """
usage: vitrine <command> [options]

Plays a signage catalog (a folder with manifest.json and its media) on a DRM/KMS screen with
ALSA sound, or into a headless output that can record and take snapshots.

commands:
  run        play a catalog folder (or the library's current catalog) in a loop
  import     copy a USB stick's (or a URL's) catalog into the library, verified, and switch to it
  play       play files given on the command line (an ad-hoc playlist)
  validate   check a manifest, its media files and a stick's sizes and hashes
  schedule   list when a catalog's schedule changes playlist and turns the display on or off
  probe      list DRM devices, connectors, modes, planes, ALSA PCMs, and what is missing
  bench      decode, convert and present one file untimed; print frames per second
  ctl        send a command to the running player through its control socket
  chrony-config  write chronyd's sources and serving lines from the config's `clock`

Run `vitrine <command> --help` (or -h) for a command's options, `man vitrine` for the manual.
exit codes: 0 ok, 64 usage, 65 invalid manifest or media, 66 catalog not found,
69 device unavailable, 1 other.
"""

let outputHelp = """
  --events FILE            append every player event to FILE as JSON lines (proof of play)
  --output drm|headless    output (default: drm when /dev/dri/card* exists, else headless)
  --record FILE            headless: write the screen and sound to FILE (.mkv), as fast as possible
  --snapshot-at T1,T2,…    headless: write PNG snapshots at these catalog times (seconds)
  --snapshot-dir DIR       where snapshots go (default: .)
  --duration S             stop after S seconds of catalog time
  --realtime               headless: pace vblanks in real time even when recording
  --audio-device NAME      ALSA PCM name (overrides the manifest); `none` for no sound
  --connector NAME         DRM connector, e.g. HDMI-A-1 (default: first connected)
  --card PATH              DRM device (default: first /dev/dri/card*)
  --clock TIME             headless: the schedule reads a virtual clock that starts at TIME
                           (2026-12-07T10:59:50Z, …+01:00, or local in the schedule's zone) and
                           runs with the vblanks, for previews and tests
  --timezone ZONE          the schedule's zone when the catalog names none (IANA, e.g.
                           Europe/Paris; default: config `timezone`, else the system's)
  --vblank-log FILE        one line per vblank: its wall-clock time (s since 1970 UTC), the item
                           on screen and the PTS (s) of its frame, `-` for none (synced walls)
  --test-display-ppm N     headless, tests: vblanks come N ppm faster than the nominal rate
  --test-audio-ppm N       tests: a sound device with no queue of its own (ALSA `null`) plays N
                           ppm faster (negative: slower) than its rate
  --config FILE            appliance config (default: /etc/vitrine/config.json if present)
  --log-file FILE          append log lines, each with its UTC time, to FILE instead of stderr
                           (on stderr, lines carry the time unless stderr is the journal)
  --verbose                debug logging
  -h, --help               this help
"""

let runHelp = """
usage: vitrine run [--catalog DIR | --library DIR] [options]

Plays DIR/manifest.json (or DIR/catalog.json); --catalog also takes the manifest file itself.
Without --catalog, plays the library's current catalog (config `library`, default
/var/lib/vitrine), or its previous one when current is broken. Missing or broken media files are
logged and skipped; when nothing can play, a slate says why and the player keeps checking.
Prints frames presented, frames dropped, xruns and the A/V offset at exit.

options:
  --catalog DIR            the catalog folder (holds manifest.json or catalog.json), or its manifest
  --library DIR            the catalog library (default: config `library`)
  --media-root DIR         where USB sticks are mounted (default: /run/vitrine/media); the player
                           imports each stick that appears there with vitrine/manifest.json
\(outputHelp)

exit codes: 0 played (or stopped by SIGINT/SIGTERM), 65 nothing in the catalog could play (an
invalid manifest, no catalog in the library, or no playable file), 66 the --catalog folder does
not exist, 69 no display (a missing sound device only mutes the run), 64 usage, 1 other.
"""

let importHelp = """
usage: vitrine import PATH [--library DIR] [--config FILE] [--events FILE] [--quiet] [--standalone]
       vitrine import URL [--library DIR] [--config FILE] [--events FILE] [--quiet] [--standalone]
       vitrine import --check [--deep] [--library DIR] [--config FILE]

Copies the catalog on a USB stick into the library and switches to it. PATH is the stick's mount
point (holding vitrine/) or the vitrine/ folder. The manifest must give size and sha256 for every
file; vitrine/manifest.json.minisig is verified against config import.trustedKeys. Every file is
hashed while it is copied; the playing catalog is untouched until the new one is whole on disk.
A URL (https://host/folder/, laid out as a stick's vitrine/ folder) is downloaded instead, with
the config's update settings (caFile, timeouts, bandwidthLimit; a signature is required unless
update.requireSignature is false): files the playing catalog holds are not fetched, the others
are checked while they download into <library>/downloads/vitrine/, which is then imported.
When a player is playing this library (it holds <library>/player.lock), the import runs in the
player, which shows its progress and result on screen and switches at the next item boundary;
this command waits for its answer and exits the same way.

--check cleans up after an interrupted import and prints what would play (--deep also re-hashes
every file).

options:
  --library DIR            the catalog library (default: config `library`, /var/lib/vitrine)
  --config FILE            appliance config (default: /etc/vitrine/config.json if present)
  --events FILE            append importStarted/importFinished JSON lines to FILE
  --quiet                  no progress lines on stderr
  --standalone             import here even when a player is running
  -h, --help               this help

exit codes: 0 switched, or already up to date (the stick holds the catalog that plays; --check:
a catalog can play), 65 refused (reasons on stderr; --check: nothing can play), 1 failed (I/O
error, disk full, another import running, the server unreachable), 64 usage.
"""

let playHelp = """
usage: vitrine play FILE… [options]

Plays the files in order as an ad-hoc playlist (video, audio, or images for --image-duration s).
A file whose name starts with "-" goes after `--`, or as ./-name.

options:
  --image-duration S       seconds to show each image (default 5)
  --once                   stop after the last file instead of looping
  --fit contain|cover|stretch   (default contain)
  --rotation 0|90|180|270  (default 0)
  --mode WxH@Hz            screen mode (headless size)
\(outputHelp)
"""

let validateHelp = """
usage: vitrine validate MANIFEST [--config FILE]

Checks MANIFEST (a manifest.json, a catalog folder holding one, or a USB stick: its mount point or
its vitrine/ folder) and every media file it names. Each file is opened and its first pictures and
sounds decoded, so a file that cannot play is named with the reason. Sizes and sha256 are checked
where the manifest gives them; on a stick they are required, with the other stick rules. A cue
point past the end of its item is a warning: it never fires.
With --config, the box's config is checked too, and its screens against the catalog: each
output's `playlist` must be one of the catalog's `playlists`, and each screen's video wall (an
output's `wall` over the config's `wall`, key by key, and that over the catalog's `display.wall`)
a whole one.
Prints each problem as `file: path: reason`, then a line per file. Exit 0 when valid, 65 when not,
66 when MANIFEST or the config does not exist (or the config is not a readable regular file), 64
usage.

options:
  --config FILE            an appliance config (/etc/vitrine/config.json) to check with it
  -h, --help               this help
"""

let scheduleHelp = """
usage: vitrine schedule CATALOG [--from TIME] [--to TIME] [--timezone ZONE]

Lists what CATALOG (a catalog folder or its manifest) plays over a period: the playlist at the
start, then one line per change of playlist or of display power, in local time (the catalog's
`timezone`, else the system's zone, from the system's tzdata) and in UTC.
TIME is ISO 8601: 2026-12-07T10:59:50Z, 2026-12-07T11:59:50+01:00, or local 2026-12-07T10:59 or
2026-12-07. The media files are not looked at (`vitrine validate` checks them). Exit 0; 65 when
the manifest is invalid (each problem printed as `path: reason`), 66 when CATALOG does not exist,
64 usage.

options:
  --from TIME              start of the period (default: now)
  --to TIME                end of the period (default: 7 days after --from)
  --timezone ZONE          an IANA zone such as Europe/Paris, instead of the catalog's
  -h, --help               this help
"""

let probeHelp = """
usage: vitrine probe

Lists DRM devices (driver, capabilities, connectors, modes, CRTCs, planes), ALSA cards and PCMs,
and what is missing for each output. Each connector shows its state (connected, disconnected or
unknown), its number of modes and the mode the player would pick (display.mode preferred); the
DRM part ends with the hot-plug monitor (udev, drm change uevents with HOTPLUG=1).

options:
  -h, --help               this help
"""

let benchHelp = """
usage: vitrine bench FILE [--mode WxH]

Decodes FILE, converts every frame to XRGB8888 and presents it on the headless output with no
clock. Prints frames, seconds and frames per second. Used by `make bench`.

options:
  --mode WxH               the headless output's size (default: the file's)
  -h, --help               this help
"""

let ctlHelp = """
usage: vitrine ctl [--socket PATH] [--json] [--timeout S] COMMAND [ARGS…]
       vitrine ctl observe
       vitrine ctl screenshot --out FILE

Sends one command to the running player through its control socket and prints the data of the
reply as indented JSON (nothing when it is null). The request is {"command": [COMMAND, ARGS…],
"request_id": 1}: an argument that reads as a JSON number, true or false is sent as that value
(set-volume 0.5, tap 100 200, jump promo 12.5), any other as a string; one that starts with "-"
and is no number goes after --. `observe` prints the player's events, one JSON line each, until
the player closes the connection (or Ctrl-C). `screenshot --out FILE` writes the PNG the player
sends to FILE; when the player names a file it wrote, that path is printed. The commands the
player takes are in docs/control.md.

options:
  --socket PATH            the control socket (default: $VITRINE_CONTROL_SOCKET, else
                           /run/vitrine/control.sock)
  --json                   print the reply line as received instead of its data
  --timeout S              seconds to wait for the connection and for the reply (default 10)
  --out FILE               screenshot: write the PNG to FILE
  -h, --help               this help

exit codes: 0 success, 1 the player answered with an error (printed on stderr) or did not answer
in time, 69 nothing listens on the socket (no player running), 64 usage.
"""

let chronyConfigHelp = """
usage: vitrine chrony-config [--config FILE] [--out FILE]

Prints the chrony directives for the config's `clock`: `server NAME iburst` for each of
clock.servers (Debian's `pool 2.debian.pool.ntp.org iburst` when there is no clock.servers), and
with clock.serve, `allow NETWORK` for each of clock.serve.allow and `local stratum N`
(clock.serve.localStratum, default 10): this box then answers NTP requests from those networks,
from its own clock when it has no source. vitrine-chrony-config.service runs it at boot with
--out /run/vitrine-chrony/vitrine.conf, before chrony.service; /etc/chrony/chrony.conf reads that
folder (confdir). See docs/sync.md.

options:
  --config FILE            appliance config (default: /etc/vitrine/config.json if present)
  --out FILE               write the lines to FILE (replaced atomically) instead of stdout
  -h, --help               this help

exit codes: 0 written, 65 the config is invalid (problems on stderr as `path: reason`; with
--out, FILE gets Debian's default pool so the box still keeps time), 66 the config cannot be
read, 1 FILE cannot be written, 64 usage.
"""

/// A command of `vitrine`: its name, what runs it, and its usage text.
struct Command: Sendable {
    var name: String
    var run: @Sendable ([String]) throws -> Exit
    var help: String
}

/// The commands, in the order `vitrine --help` lists them.
let commands: [Command] = [
    Command(name: "run", run: commandRun, help: runHelp), Command(name: "import", run: commandImport, help: importHelp),
    Command(name: "play", run: commandPlay, help: playHelp), Command(name: "validate", run: commandValidate, help: validateHelp),
    Command(name: "schedule", run: commandSchedule, help: scheduleHelp),
    Command(name: "probe", run: commandProbe, help: probeHelp), Command(name: "bench", run: commandBench, help: benchHelp),
    Command(name: "ctl", run: commandCtl, help: ctlHelp),
    Command(name: "chrony-config", run: commandChronyConfig, help: chronyConfigHelp),
]
