/*
 * uinput-touch: a multi-touch touchscreen in the guest, driven by lines written to a FIFO.
 * tools/vm-test builds it on the host (cc -static), copies it into the VM through the guest agent
 * and runs it there, so that a real kernel input device goes through udev and libinput into the
 * player, as a touchscreen's would.
 *
 *   uinput-touch FIFO [LOG]
 *
 * Creates "Vitrine test touchscreen" (INPUT_PROP_DIRECT, protocol B: ABS_MT_SLOT,
 * ABS_MT_TRACKING_ID, ABS_MT_POSITION_X/Y, plus ABS_X/Y and BTN_TOUCH), 3201 x 1801 units at
 * 10 units/mm (320 x 180 mm), then makes FIFO and reads commands from it, one per line:
 *
 *   tap X Y [MS]   touch down at (X, Y), normalized 0..1, and up MS milliseconds later (default 80)
 *   down X Y       touch down (slot 0)
 *   move X Y       touch motion (slot 0)
 *   up             touch up (slot 0)
 *   quit           destroy the device and exit
 *
 * Each command and the CLOCK_MONOTONIC time it was written at goes to LOG (default stderr).
 * Only linux/uinput.h: the protocol is the kernel's Documentation/input/uinput.rst and
 * multi-touch-protocol.rst.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/uinput.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { WIDTH = 3201, HEIGHT = 1801, RES = 10 };

static FILE *logf_;
static int fd = -1;
static int tracking;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(logf_, "%.6f ", now());
    vfprintf(logf_, fmt, ap);
    fputc('\n', logf_);
    fflush(logf_);
    va_end(ap);
}

static void die(const char *what) {
    say("error: %s: %s", what, strerror(errno));
    exit(1);
}

static void xioctl(unsigned long req, unsigned long arg, const char *what) {
    if (ioctl(fd, req, arg) < 0) die(what);
}

static void emit(int type, int code, int value) {
    struct input_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = type;
    ev.code = code;
    ev.value = value;
    if (write(fd, &ev, sizeof ev) != sizeof ev) die("write");
}

static void syn(void) { emit(EV_SYN, SYN_REPORT, 0); }

static void abs_setup(int code, int min, int max, int res) {
    struct uinput_abs_setup a;
    memset(&a, 0, sizeof a);
    a.code = code;
    a.absinfo.minimum = min;
    a.absinfo.maximum = max;
    a.absinfo.resolution = res;
    xioctl(UI_ABS_SETUP, (unsigned long)&a, "UI_ABS_SETUP");
}

static void position(double x, double y) {
    int ux = (int)(x * (WIDTH - 1) + 0.5), uy = (int)(y * (HEIGHT - 1) + 0.5);
    emit(EV_ABS, ABS_MT_SLOT, 0);
    emit(EV_ABS, ABS_MT_POSITION_X, ux);
    emit(EV_ABS, ABS_MT_POSITION_Y, uy);
    emit(EV_ABS, ABS_X, ux);
    emit(EV_ABS, ABS_Y, uy);
}

static void down(double x, double y) {
    emit(EV_ABS, ABS_MT_SLOT, 0);
    emit(EV_ABS, ABS_MT_TRACKING_ID, ++tracking);
    position(x, y);
    emit(EV_KEY, BTN_TOUCH, 1);
    syn();
}

static void up(void) {
    emit(EV_ABS, ABS_MT_SLOT, 0);
    emit(EV_ABS, ABS_MT_TRACKING_ID, -1);
    emit(EV_KEY, BTN_TOUCH, 0);
    syn();
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: uinput-touch FIFO [LOG]\n");
        return 64;
    }
    logf_ = stderr;
    if (argc > 2 && !(logf_ = fopen(argv[2], "a"))) logf_ = stderr;

    fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) die("/dev/uinput");
    xioctl(UI_SET_EVBIT, EV_KEY, "UI_SET_EVBIT");
    xioctl(UI_SET_KEYBIT, BTN_TOUCH, "UI_SET_KEYBIT");
    xioctl(UI_SET_EVBIT, EV_ABS, "UI_SET_EVBIT");
    int axes[] = {ABS_X, ABS_Y, ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID};
    for (unsigned i = 0; i < sizeof axes / sizeof *axes; i++) xioctl(UI_SET_ABSBIT, axes[i], "UI_SET_ABSBIT");
    xioctl(UI_SET_PROPBIT, INPUT_PROP_DIRECT, "UI_SET_PROPBIT");
    abs_setup(ABS_X, 0, WIDTH - 1, RES);
    abs_setup(ABS_Y, 0, HEIGHT - 1, RES);
    abs_setup(ABS_MT_SLOT, 0, 9, 0);
    abs_setup(ABS_MT_TRACKING_ID, 0, 65535, 0);
    abs_setup(ABS_MT_POSITION_X, 0, WIDTH - 1, RES);
    abs_setup(ABS_MT_POSITION_Y, 0, HEIGHT - 1, RES);
    struct uinput_setup setup;
    memset(&setup, 0, sizeof setup);
    setup.id.bustype = BUS_VIRTUAL;
    setup.id.vendor = 0x1209;
    setup.id.product = 0x7001;
    setup.id.version = 1;
    strcpy(setup.name, "Vitrine test touchscreen");
    xioctl(UI_DEV_SETUP, (unsigned long)&setup, "UI_DEV_SETUP");
    xioctl(UI_DEV_CREATE, 0, "UI_DEV_CREATE");
    char sysname[64] = "";
    ioctl(fd, UI_GET_SYSNAME(sizeof sysname), sysname);
    say("created %s: %dx%d units at %d/mm", sysname, WIDTH, HEIGHT, RES);

    unlink(argv[1]);
    if (mkfifo(argv[1], 0600) < 0) die("mkfifo");
    /* O_RDWR: the FIFO never reports end-of-file when a writer closes it. */
    FILE *in = fopen(argv[1], "r+");
    if (!in) die("open fifo");
    say("ready %s", argv[1]);
    char line[256];
    while (fgets(line, sizeof line, in)) {
        double x, y;
        int ms = 80;
        line[strcspn(line, "\n")] = 0;
        if (sscanf(line, "tap %lf %lf %d", &x, &y, &ms) >= 2) {
            down(x, y);
            say("down %.4f %.4f", x, y);
            usleep(ms * 1000);
            up();
            say("up");
        } else if (sscanf(line, "down %lf %lf", &x, &y) == 2) {
            down(x, y);
            say("down %.4f %.4f", x, y);
        } else if (sscanf(line, "move %lf %lf", &x, &y) == 2) {
            position(x, y);
            syn();
            say("move %.4f %.4f", x, y);
        } else if (strcmp(line, "up") == 0) {
            up();
            say("up");
        } else if (strcmp(line, "quit") == 0) {
            break;
        } else if (line[0]) {
            say("unknown command: %s", line);
        }
    }
    ioctl(fd, UI_DEV_DESTROY);
    close(fd);
    unlink(argv[1]);
    say("destroyed");
    return 0;
}
