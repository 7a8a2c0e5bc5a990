#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include "CProgressTreePlatform.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sys/socket.h>

#if defined(__linux__)
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#if defined(__APPLE__)
#include <TargetConditionals.h>
#endif

// tvOS and watchOS start no process (their SDKs mark `fork` unavailable); this target is built there all
// the same, as a dependency of the platform module, which the model needs.
#if defined(__APPLE__) && (TARGET_OS_TV || TARGET_OS_WATCH)
#define PROGRESSTREE_STARTS_PROCESSES 0
#else
#define PROGRESSTREE_STARTS_PROCESSES 1
#endif

#if PROGRESSTREE_STARTS_PROCESSES

/// The most descriptor pairs handed on: the progress channel, standard input, output and error.
#define MAXIMUM_PAIRS 8

/// Between `fork` and `execve` the new process runs only async-signal-safe calls (it is a copy of a
/// process with other threads, whose locks may be held): no allocation, no lock, no Swift.
static void run_child(const char *path, char *const argv[], char *const envp[], const int *copies,
                      const int *targets, int count, int parent_death_signal, pid_t parent,
                      int reset_broken_pipe, int error_pipe) {
    // A process group of its own, led by the program: what it starts joins it, and the group is what its
    // watcher ends. Before execve, which the parent waits for (the error pipe), so the watcher it starts
    // next finds the group.
    if (setpgid(0, 0) == -1) goto failed;
#if defined(__linux__)
    if (parent_death_signal > 0) {
        if (prctl(PR_SET_PDEATHSIG, parent_death_signal) == -1) goto failed;
        // The parent may have ended before the call: then nobody would send the signal.
        if (getppid() != parent) _exit(128 + parent_death_signal);
    }
#else
    (void)parent_death_signal;
    (void)parent;
#endif
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (reset_broken_pipe) signal(SIGPIPE, SIG_DFL);
    for (int index = 0; index < count; index++) {
        int source = copies[index];
        if (source < 0) {
            source = open("/dev/null", O_RDONLY);
            if (source < 0) goto failed;
        }
        // The copies are all above every target, so no dup2 overwrites one still to be handed on; dup2
        // leaves the new descriptor open across execve.
        if (dup2(source, targets[index]) == -1) goto failed;
    }
    execve(path, argv, envp);
failed:;
    int code = errno;
    ssize_t ignored = write(error_pipe, &code, sizeof code);
    (void)ignored;
    _exit(127);
}

/// Closes every descriptor but `kept`: two system calls where Linux has close_range (5.9 and later; a raw
/// system call, async-signal-safe), else one `close` per possible descriptor below `limit` (measured
/// before `fork`, since `getrlimit` is not async-signal-safe).
static void close_all_but(int kept, int limit) {
#if defined(__linux__) && defined(SYS_close_range)
    int done = 1;
    if (kept > 0 && syscall(SYS_close_range, 0u, (unsigned)kept - 1, 0u) != 0) done = 0;
    if (done && syscall(SYS_close_range, (unsigned)kept + 1, ~0u, 0u) != 0) done = 0;
    if (done) return;
#endif
    for (int descriptor = 0; descriptor < limit; descriptor++) {
        if (descriptor != kept) close(descriptor);
    }
}

/// Writes `value` (not negative) in decimal into `text` (room for 24 bytes), with `decimals` digits after a
/// point when not 0. Before `fork`.
static void write_decimal(char *text, long value, int decimals) {
    char digits[24];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value > 0 || count <= decimals);
    int length = 0;
    for (int index = count - 1; index >= 0; index--) {
        text[length++] = digits[index];
        if (index == decimals && decimals > 0) text[length++] = '.';
    }
    text[length] = 0;
}

/// What the watcher runs once it is a shell: wait for the end of its standard input (the pipe), then end the
/// group given as $1, $2 seconds apart. `kill` and `read` are the shell's own; `sleep` is a program of the
/// group, ended by the SIGKILL with the rest.
static const char watcher_script[] =
    "read -r line; kill -TERM -\"$1\"; kill -CONT -\"$1\"; sleep \"$2\"; kill -KILL -\"$1\"";

/// The watcher of process group `group`, in a process forked from this multi-threaded one: async-signal-safe
/// calls only (`setpgid`, `prctl`, `sigaction`, `sigprocmask`, `close`, `dup2`, `fcntl`, `execve`; where
/// `execve` fails, `read`, `poll`, `kill`, `_exit`), no allocation, no lock, no Swift. The strings it passes
/// were made before `fork`.
///
/// It joins the group, so that the group's id cannot be taken by another group while it waits (a group
/// id is free again only once its last member is gone): its `kill(-group, …)` can only reach the mounted
/// program's group. It keeps no descriptor but the read end of its pipe, as its standard input — one held
/// open here would keep a stream of the mount, or another watcher's pipe, from ending — and ignores the
/// signals a terminal or the group's own end sends (ignored signals stay ignored across `execve`), so that
/// SIGKILL alone ends it. It then becomes `/bin/sh` running `watcher_script`, which gives back every page
/// of this process's copy: a fork that lived on would keep, page by page, the old copy of whatever this
/// process writes meanwhile. Where `/bin/sh` cannot be run, the same steps run here.
///
/// When the pipe's write end is closed (the mount ended the group, or the process that holds it ended,
/// however: the system closes a dead process's descriptors), it sends SIGTERM (and SIGCONT,
/// for a stopped member) to the group, waits `grace_milliseconds`, and sends SIGKILL to whatever is left,
/// itself included.
static void run_watcher(pid_t group, int watch_pipe, int descriptor_limit, int grace_milliseconds,
                        char *const shell_arguments[], char *const shell_environment[]) {
    if (setpgid(0, group) == -1) _exit(0);  // the group ended and its leader was reaped: nothing to guard
#if defined(__linux__)
    // Its name until execve, and where /bin/sh cannot be run (`ps -o comm`, `top`).
    prctl(PR_SET_NAME, "progresstree-wd");
#endif
    struct sigaction ignore;
    ignore.sa_handler = SIG_IGN;
    ignore.sa_flags = 0;
    sigemptyset(&ignore.sa_mask);
    const int ignored[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2};
    for (unsigned index = 0; index < sizeof ignored / sizeof ignored[0]; index++) {
        sigaction(ignored[index], &ignore, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    close_all_but(watch_pipe, descriptor_limit);
    // The shell reads the pipe as its standard input, not close-on-exec (a copy made by dup2 is not; a pipe
    // that was given descriptor 0 itself is made so).
    if (watch_pipe != 0 && dup2(watch_pipe, 0) == 0) {
        close(watch_pipe);
        watch_pipe = 0;
    }
    if (watch_pipe == 0 && fcntl(0, F_SETFD, 0) == 0) execve("/bin/sh", shell_arguments, shell_environment);
    char byte;
    ssize_t got;
    do {
        got = read(watch_pipe, &byte, 1);
    } while (got < 0 && errno == EINTR);
    kill(-group, SIGTERM);
    kill(-group, SIGCONT);
    poll(NULL, 0, grace_milliseconds);
    kill(-group, SIGKILL);
    _exit(0);
}

int progresstree_spawn(const char *path, char *const argv[], char *const envp[], const int *sources,
                       const int *targets, int count, int parent_death_signal, int reset_broken_pipe,
                       int grace_milliseconds, pid_t *pid, pid_t *watcher, int *watcher_descriptor) {
    if (count < 0 || count > MAXIMUM_PAIRS) return EINVAL;
    int highest = 2;
    for (int index = 0; index < count; index++) {
        if (targets[index] > highest) highest = targets[index];
    }
    // Copies of the sources above every target, close-on-exec (the child's dup2 makes its own copies).
    int copies[MAXIMUM_PAIRS];
    int made = 0;
    int result = 0;
    for (; made < count; made++) {
        copies[made] = -1;
        if (sources[made] < 0) continue;
        copies[made] = fcntl(sources[made], F_DUPFD_CLOEXEC, highest + 1);
        if (copies[made] < 0) {
            result = errno;
            goto done;
        }
    }
    int error_pipe[2];
#if defined(__linux__)
    if (pipe2(error_pipe, O_CLOEXEC) != 0) {
        result = errno;
        goto done;
    }
#else
    if (pipe(error_pipe) != 0) {
        result = errno;
        goto done;
    }
    fcntl(error_pipe[0], F_SETFD, FD_CLOEXEC);
    fcntl(error_pipe[1], F_SETFD, FD_CLOEXEC);
#endif
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        run_child(path, argv, envp, copies, targets, count, parent_death_signal, parent, reset_broken_pipe,
                  error_pipe[1]);
    }
    if (child < 0) {
        result = errno;
        close(error_pipe[0]);
        close(error_pipe[1]);
        goto done;
    }
    close(error_pipe[1]);
    // The write end closes at execve (close-on-exec): end of file means the program runs.
    int code = 0;
    ssize_t got;
    do {
        got = read(error_pipe[0], &code, sizeof code);
    } while (got < 0 && errno == EINTR);
    close(error_pipe[0]);
    if (got == (ssize_t)sizeof code) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        result = code;
        goto done;
    }
    // The program runs: it made its group before execve, so the watcher finds the group to join.
    int watch_pipe[2];
    struct rlimit limit;
    int descriptor_limit = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 1048576) {
        descriptor_limit = (int)limit.rlim_cur;
    }
    char group_text[24];
    char grace_text[24];
    write_decimal(group_text, (long)child, 0);
    write_decimal(grace_text, grace_milliseconds > 0 ? grace_milliseconds : 0, 3);
    char *shell_arguments[] = {"progresstree-watcher", "-c", (char *)watcher_script, "progresstree-watcher",
                               group_text, grace_text, NULL};
    char *shell_environment[] = {"PATH=/usr/bin:/bin", NULL};
    result = progresstree_pipe(watch_pipe);
    if (result == 0) {
        pid_t guard = fork();
        if (guard == 0) {
            run_watcher(child, watch_pipe[0], descriptor_limit, grace_milliseconds, shell_arguments,
                        shell_environment);
        }
        if (guard < 0) result = errno;
        close(watch_pipe[0]);
        if (guard < 0) {
            close(watch_pipe[1]);
        } else {
            *watcher = guard;
            *watcher_descriptor = watch_pipe[1];
        }
    }
    if (result != 0) {
        // No watcher: the program is not started, since nothing would end its group.
        kill(-child, SIGKILL);
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        goto done;
    }
    *pid = child;
done:
    for (int index = 0; index < made; index++) {
        if (copies[index] >= 0) close(copies[index]);
    }
    return result;
}

#else

int progresstree_spawn(const char *path, char *const argv[], char *const envp[], const int *sources,
                       const int *targets, int count, int parent_death_signal, int reset_broken_pipe,
                       int grace_milliseconds, pid_t *pid, pid_t *watcher, int *watcher_descriptor) {
    (void)grace_milliseconds;
    (void)watcher;
    (void)watcher_descriptor;
    (void)path;
    (void)argv;
    (void)envp;
    (void)sources;
    (void)targets;
    (void)count;
    (void)parent_death_signal;
    (void)reset_broken_pipe;
    (void)pid;
    return ENOTSUP;
}

#endif

int progresstree_process_descriptor(pid_t pid) {
#if defined(__linux__) && defined(SYS_pidfd_open)
    // Close-on-exec by definition (pidfd_open sets it).
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

int progresstree_pipe(int descriptors[2]) {
#if defined(__linux__)
    return pipe2(descriptors, O_CLOEXEC) == 0 ? 0 : errno;
#else
    if (pipe(descriptors) != 0) return errno;
    fcntl(descriptors[0], F_SETFD, FD_CLOEXEC);
    fcntl(descriptors[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

int progresstree_peer_user(int descriptor, uid_t *user) {
#if defined(__linux__)
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return errno;
    *user = credentials.uid;
    return 0;
#else
    gid_t group;
    return getpeereid(descriptor, user, &group) == 0 ? 0 : errno;
#endif
}

int progresstree_socket(int family, int type, int protocol) {
#if defined(SOCK_CLOEXEC)
    return socket(family, type | SOCK_CLOEXEC, protocol);
#else
    int descriptor = socket(family, type, protocol);
    if (descriptor >= 0) fcntl(descriptor, F_SETFD, FD_CLOEXEC);
    return descriptor;
#endif
}

int progresstree_socket_pair(int descriptors[2]) {
#if defined(SOCK_CLOEXEC)
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, descriptors) == 0 ? 0 : errno;
#else
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, descriptors) != 0) return errno;
    fcntl(descriptors[0], F_SETFD, FD_CLOEXEC);
    fcntl(descriptors[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

int progresstree_signal_has_default_action(int signal_number) {
    struct sigaction current;
    if (sigaction(signal_number, NULL, &current) != 0) return -1;
    // `sa_handler` shares its storage with `sa_sigaction`: a handler of either kind is not SIG_DFL.
    return current.sa_handler == SIG_DFL ? 1 : 0;
}

void progresstree_unblock_signal(int signal_number) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

int progresstree_start_detached_thread(void *(*run)(void *), void *context) {
    pthread_attr_t attributes;
    int result = pthread_attr_init(&attributes);
    if (result != 0) return result;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    result = pthread_create(&thread, &attributes, run, context);
    pthread_attr_destroy(&attributes);
    return result;
}

void progresstree_name_thread(const char *name) {
#if defined(__linux__)
    prctl(PR_SET_NAME, name);
#elif defined(__APPLE__)
    pthread_setname_np(name);
#else
    (void)name;
#endif
}

int progresstree_poller_create(void) {
#if defined(__linux__)
    return epoll_create1(EPOLL_CLOEXEC);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int progresstree_poller_add(int poller, int descriptor) {
#if defined(__linux__)
    struct epoll_event event = {0};
    event.events = EPOLLIN | EPOLLRDHUP;
    event.data.fd = descriptor;
    return epoll_ctl(poller, EPOLL_CTL_ADD, descriptor, &event) == 0 ? 0 : errno;
#else
    (void)poller;
    (void)descriptor;
    return ENOSYS;
#endif
}

int progresstree_poller_remove(int poller, int descriptor) {
#if defined(__linux__)
    struct epoll_event event = {0};
    return epoll_ctl(poller, EPOLL_CTL_DEL, descriptor, &event) == 0 ? 0 : errno;
#else
    (void)poller;
    (void)descriptor;
    return ENOSYS;
#endif
}

int progresstree_poller_wait(int poller, int *ready, int capacity, int milliseconds) {
#if defined(__linux__)
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(poller, events, capacity, milliseconds);
    for (int index = 0; index < count; index++) ready[index] = events[index].data.fd;
    return count;
#else
    (void)poller;
    (void)ready;
    (void)capacity;
    (void)milliseconds;
    errno = ENOSYS;
    return -1;
#endif
}

struct progresstree_sanitizer_annotations progresstree_sanitizer_annotations_in_process = {NULL, NULL};

// Runs when the image holding this file (the program, or a library it loads) is loaded: nothing in that
// image runs before it, so no lock of the package reads the global before its only write; the loader orders
// that write before every later read, from any thread. Both functions or neither.
__attribute__((constructor)) static void progresstree_find_sanitizer_annotations(void) {
    void *acquire = dlsym(RTLD_DEFAULT, "__tsan_acquire");
    void *release = dlsym(RTLD_DEFAULT, "__tsan_release");
    if (acquire != NULL && release != NULL) {
        progresstree_sanitizer_annotations_in_process.acquire = (progresstree_sanitizer_annotation)acquire;
        progresstree_sanitizer_annotations_in_process.release = (progresstree_sanitizer_annotation)release;
    }
}
