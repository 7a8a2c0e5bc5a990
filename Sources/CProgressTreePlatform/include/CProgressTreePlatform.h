#ifndef C_PROGRESSTREE_PLATFORM_H
#define C_PROGRESSTREE_PLATFORM_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (both NULL-terminated) in a new process, whose descriptor
/// `targets[i]` is a copy of this process's `sources[i]` for each of the `count` pairs (a source of -1:
/// /dev/null, read-only). Every other descriptor made close-on-exec stays out. In the new process the
/// signal mask is empty and, when `reset_broken_pipe` is not 0, SIGPIPE has its default action.
///
/// `parent_death_signal` (Linux only; 0: none) is the signal the new process gets when the thread that
/// calls this function ends, which is when this process ends if that thread lives as long as it.
///
/// The new process leads a process group of its own (its id is `pid`), which the processes it starts
/// join unless they leave it. A second new process, the group's watcher (`watcher`, a child of this one
/// that becomes `/bin/sh` running a one-line script, or waits itself where that cannot run), joins that
/// group and waits on a pipe whose only write end is `watcher_descriptor` (close-on-exec, held by this
/// process alone). When that descriptor is closed —
/// by the caller, or by the system when this process ends, however it ends — the watcher sends SIGTERM
/// and SIGCONT to the group, then SIGKILL `grace_milliseconds` later, which ends it too. The caller
/// reaps both processes (`waitpid`).
///
/// Returns 0, the process's id in `pid` and the watcher's in `watcher` and `watcher_descriptor`, or the
/// `errno` of what failed (`fork`, or `execve` in the new process, which then exits without running
/// anything; a program whose watcher cannot be started is killed and reaped); `ENOTSUP` on tvOS and
/// watchOS, which start no process.
int progresstree_spawn(const char *path, char *const argv[], char *const envp[], const int *sources,
                       const int *targets, int count, int parent_death_signal, int reset_broken_pipe,
                       int grace_milliseconds, pid_t *pid, pid_t *watcher, int *watcher_descriptor);

/// A descriptor that becomes readable when process `pid` (a child of this one) ends, close-on-exec; -1
/// where the system has none (Linux before 5.3, other systems).
int progresstree_process_descriptor(pid_t pid);

/// A pipe, both ends close-on-exec: 0, or `errno`.
int progresstree_pipe(int descriptors[2]);

/// The user id of the process at the other end of the Unix-domain socket `descriptor`: 0 and `user`,
/// or `errno`.
int progresstree_peer_user(int descriptor, uid_t *user);

/// `socket(2)`, close-on-exec: atomically where the system has `SOCK_CLOEXEC`, just after elsewhere
/// (Darwin). The descriptor, or -1 and `errno`.
int progresstree_socket(int family, int type, int protocol);

/// A connected pair of Unix-domain stream sockets, both close-on-exec as `progresstree_socket` makes
/// them: 0, or `errno`.
int progresstree_socket_pair(int descriptors[2]);

/// Whether `signal_number` has its default action (no handler set, not ignored): 1 or 0; -1 and `errno`
/// when it cannot be read. In C because the C libraries name the handler's field differently.
int progresstree_signal_has_default_action(int signal_number);

/// Unblocks `signal_number` for the calling thread. Async-signal-safe. In C because Darwin's `sigset_t`
/// functions are macros.
void progresstree_unblock_signal(int signal_number);

/// Starts a detached thread running `run(context)`: 0, or the `errno` of `pthread_create`.
int progresstree_start_detached_thread(void *(*run)(void *), void *context);

/// One of ThreadSanitizer's annotation functions (`__tsan_acquire`, `__tsan_release`).
typedef void (*progresstree_sanitizer_annotation)(void *address);

/// ThreadSanitizer's annotation functions, found by name in the running process by a constructor, when
/// the image holding this library is loaded (before anything in it runs): both set when the process runs
/// under the sanitizer, both NULL otherwise. Written once; read-only after.
struct progresstree_sanitizer_annotations {
    progresstree_sanitizer_annotation acquire;
    progresstree_sanitizer_annotation release;
};

/// What the constructor found. Read through `progresstree_sanitizer_annotations_found()`.
extern struct progresstree_sanitizer_annotations progresstree_sanitizer_annotations_in_process;

/// The annotation functions: two loads, no call and no check of a lazy initialization (the lock of every
/// node asks at each critical section).
static inline struct progresstree_sanitizer_annotations progresstree_sanitizer_annotations_found(void) {
    return progresstree_sanitizer_annotations_in_process;
}

/// Names the calling thread (Linux keeps 15 bytes), as `top -H` and debuggers show it.
void progresstree_name_thread(const char *name);

/// Linux's epoll, for the reactor that waits on every stream of the process: a close-on-exec epoll
/// descriptor, or -1 (and `errno`; `ENOSYS` where there is no epoll).
int progresstree_poller_create(void);

/// Watches `descriptor` for input and hang-ups (level-triggered): 0, or `errno` (`EPERM` for a regular
/// file, which epoll does not watch: it is always readable).
int progresstree_poller_add(int poller, int descriptor);

/// Stops watching `descriptor`: 0, or `errno`.
int progresstree_poller_remove(int poller, int descriptor);

/// Waits at most `milliseconds` (-1: no limit) for watched descriptors to be ready and stores up to
/// `capacity` of them in `ready`: how many, or -1 (and `errno`).
int progresstree_poller_wait(int poller, int *ready, int capacity, int milliseconds);

#endif
