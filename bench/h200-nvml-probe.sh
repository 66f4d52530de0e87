#!/bin/sh
# The NVML probe run on the H200 on 2026-12-03 (bench/results/2026-12-03-gpu-readers.md):
# the calls gpuact makes, with the same sample layout, timed, against a torch process
# running one 5 s kernel.  Self-contained (gcc, python3 with torch): run it there as is.
cat>/tmp/n.c<<'E'
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
#include <time.h>
#include <sys/time.h>
typedef struct{unsigned pid;unsigned long long ts;unsigned sm,mem,enc,dec;}S;
typedef struct{unsigned g,m;}U;
double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
int main(int c,char**v){void*l=dlopen("libnvidia-ml.so.1",RTLD_NOW);
int(*in)(void)=dlsym(l,"nvmlInit_v2");int(*h)(unsigned,void**)=dlsym(l,"nvmlDeviceGetHandleByIndex_v2");
int(*pu)(void*,S*,unsigned*,unsigned long long)=dlsym(l,"nvmlDeviceGetProcessUtilization");
int(*du)(void*,U*)=dlsym(l,"nvmlDeviceGetUtilizationRates");
int(*cr)(void*,unsigned long long*)=dlsym(l,"nvmlDeviceGetCurrentClocksEventReasons");
printf("S=%zu cr=%d\n",sizeof(S),!!cr);in();void*d;h(0,&d);unsigned pid=atoi(v[1]);
struct timeval tv;gettimeofday(&tv,0);unsigned long long seen=tv.tv_sec*1000000ull+tv.tv_usec-1000000;
for(int i=0;i<24;i++){static S s[1024];unsigned n=1024,k=0,sm=0;double c0=clock()/1e6,w0=now();
int r=pu(d,s,&n,seen);double w1=now(),c1=clock()/1e6;U u={0};du(d,&u);unsigned long long cre=0;if(cr)cr(d,&cre);
for(unsigned j=0;r==0&&j<n;j++){if(s[j].ts>seen)seen=s[j].ts;if(s[j].pid==pid){k++;sm=s[j].sm;}}
printf("t=%.1f r=%d n=%u k=%u sm=%u dev=%u rs=%llx %.0fus %.0fus p0=%u ts0=%llu\n",i*0.5,r,n,k,sm,u.g,cre,(w1-w0)*1e6,(c1-c0)*1e6,s[0].pid,s[0].ts);
struct timespec z={0,500000000};nanosleep(&z,0);}}
E
gcc -O2 -o /tmp/n /tmp/n.c -ldl || exit 1
python3 -c "
import torch,time,os
torch.zeros(1,device='cuda');torch.cuda.synchronize()
t=time.time();torch.cuda._sleep(100000000);torch.cuda.synchronize();r=1e8/(time.time()-t)
print('ready',flush=True);time.sleep(2);torch.cuda._sleep(int(r*5));torch.cuda.synchronize();print('end',flush=True);time.sleep(4)" > /tmp/t.log 2>&1 &
p=$!
until grep -q ready /tmp/t.log;do sleep 0.2;done
/tmp/n $p
cat /tmp/t.log
echo pid $p
dd if=/dev/kmsg iflag=nonblock bs=8K status=none|grep -c NVRM
