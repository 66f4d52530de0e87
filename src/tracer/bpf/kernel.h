/* The kernel's types that sockflow.bpf.c reads, reduced to the members it
 * uses.  preserve_access_index makes every access a CO-RE relocation:
 * libbpf finds each member by name in the running kernel's BTF
 * (/sys/kernel/btf/vmlinux) and patches its offset at load, so no
 * vmlinux.h of one kernel is needed to build (libbpf's "CO-RE without
 * vmlinux.h"; members of anonymous unions, as sock_common's, are found
 * through them).  Layouts named here are those of linux/include at 6.1:
 * linux/sched.h, fdtable.h, fs.h, net.h, net/sock.h, net/af_unix.h,
 * arch/x86/include/asm/ptrace.h. */
#ifndef GP_BPF_KERNEL_H
#define GP_BPF_KERNEL_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed char __s8;
typedef short __s16;
typedef int __s32;
typedef long long __s64;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
};

struct bpf_raw_tracepoint_args {
	__u64 args[0];
};

#define GP_CORE __attribute__((preserve_access_index))

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, flags, sp;
} GP_CORE;

struct in6_addr {
	union {
		__u8 u6_addr8[16];
	} in6_u;
} GP_CORE;

struct sock_common {
	__be32 skc_daddr;
	__be16 skc_dport;
	__u16 skc_num;
	unsigned short skc_family;
	struct in6_addr skc_v6_daddr;
} GP_CORE;

struct sock {
	struct sock_common __sk_common;
} GP_CORE;

struct unix_address;
struct unix_sock {
	struct sock sk;
	struct unix_address *addr;
} GP_CORE;

struct file;
struct socket {
	short type;
	struct sock *sk;
} GP_CORE;

struct super_block {
	__u32 s_dev;
} GP_CORE;

struct inode {
	unsigned short i_mode;
	unsigned long i_ino;
	struct super_block *i_sb;
} GP_CORE;

struct file {
	struct inode *f_inode;
	void *private_data;
} GP_CORE;

struct fdtable {
	unsigned int max_fds;
	struct file **fd;
} GP_CORE;

struct files_struct {
	struct fdtable *fdt;
} GP_CORE;

struct mm_struct;
struct task_struct {
	unsigned int __state;
	int on_cpu;
	int pid, tgid;
	struct mm_struct *mm;
	struct files_struct *files;
	struct task_struct *real_parent;
} GP_CORE;

struct seq_file;
struct bpf_iter_meta {
	struct seq_file *seq;
} GP_CORE;

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} GP_CORE;

#endif
