/* Logging.  FS_LOG_MAX_LEVEL caps what is compiled in: release builds keep
 * ERROR..INFO, so DEBUG/TRACE cost nothing on the fast path. */
#ifndef FS_LOG_H
#define FS_LOG_H

typedef enum fs_log_level {
    FS_LOG_ERROR = 0,
    FS_LOG_WARN  = 1,
    FS_LOG_INFO  = 2,
    FS_LOG_DEBUG = 3,
    FS_LOG_TRACE = 4
} fs_log_level_t;

#ifndef FS_LOG_MAX_LEVEL
#  ifdef NDEBUG
#    define FS_LOG_MAX_LEVEL FS_LOG_INFO
#  else
#    define FS_LOG_MAX_LEVEL FS_LOG_DEBUG
#  endif
#endif

/* Runtime verbosity (pml_failstop_verbose): messages above it are dropped. */
extern int fs_log_level;

void fs_log_set_identity(const char *ident);
void fs_log_emit(fs_log_level_t level, const char *file, int line,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#define FS_LOG(_level, ...) \
    do { \
        if (((_level) <= FS_LOG_MAX_LEVEL) && ((_level) <= fs_log_level)) { \
            fs_log_emit((_level), __FILE__, __LINE__, __VA_ARGS__); \
        } \
    } while (0)

#define FS_ERROR(...) FS_LOG(FS_LOG_ERROR, __VA_ARGS__)
#define FS_WARN(...)  FS_LOG(FS_LOG_WARN, __VA_ARGS__)
#define FS_INFO(...)  FS_LOG(FS_LOG_INFO, __VA_ARGS__)
#define FS_DEBUG(...) FS_LOG(FS_LOG_DEBUG, __VA_ARGS__)
#define FS_TRACE(...) FS_LOG(FS_LOG_TRACE, __VA_ARGS__)

#endif
