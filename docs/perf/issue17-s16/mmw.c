#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
typedef struct { atomic_int arrive[64]; double t[64][2]; } shared_t;
static shared_t *sh;
static void barrier(int np, int round){ atomic_fetch_add(&sh->arrive[round],1); while(atomic_load(&sh->arrive[round])<np) sched_yield(); }
int main(int argc,char**argv){
  int np=atoi(argv[1]); size_t per=(size_t)atoi(argv[2])<<20; const char*meth=argv[3]; const char*path=argv[4]; int reps=argc>5?atoi(argv[5]):10;
  size_t piece=2<<20;
  sh=mmap(NULL,sizeof *sh,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
  double best=1e9,sum=0;
  for(int r=0;r<reps;r++){
    memset(sh,0,sizeof *sh);
    unlink(path); int fd0=open(path,O_CREAT|O_RDWR|O_TRUNC,0644); 
    if(strcmp(meth,"pw")) { if(ftruncate(fd0,(off_t)(per*np))) {perror("ftruncate");return 1;} }
    close(fd0);
    for(int p=0;p<np;p++) if(fork()==0){
      cpu_set_t s;CPU_ZERO(&s);CPU_SET(p%2,&s);sched_setaffinity(0,sizeof s,&s);
      char*buf=aligned_alloc(4096,per); memset(buf,p+1,per);
      int fd=open(path,O_RDWR); off_t off=(off_t)per*p;
      barrier(np,0); double t0=now();
      if(!strcmp(meth,"pw")){ for(size_t o=0;o<per;o+=piece) if(pwrite(fd,buf+o,piece<per-o?piece:per-o,off+o)<0){perror("pwrite");_exit(1);} }
      else {
        if(!strcmp(meth,"famm")||!strcmp(meth,"fapop")) if(fallocate(fd,0,off,per)){perror("fallocate");_exit(1);}
        for(size_t o=0;o<per;o+=piece){ size_t n=piece<per-o?piece:per-o;
          char*m=mmap(NULL,n,PROT_READ|PROT_WRITE,MAP_SHARED,fd,off+o); if(m==MAP_FAILED){perror("mmap");_exit(1);}
          if(!strcmp(meth,"pop")||!strcmp(meth,"fapop")) if(madvise(m,n,MADV_POPULATE_WRITE)){perror("madvise");_exit(1);}
          memcpy(m,buf+o,n); munmap(m,n);} }
      double t1=now(); sh->t[p][0]=t0; sh->t[p][1]=t1; close(fd); _exit(0);}
    for(int p=0;p<np;p++) wait(NULL);
    double a=1e18,b=0; for(int p=0;p<np;p++){ if(sh->t[p][0]<a)a=sh->t[p][0]; if(sh->t[p][1]>b)b=sh->t[p][1]; }
    double mbs=per*np/(b-a)/1e6; sum+=mbs; if(b-a<best)best=b-a;
  }
  /* verify last file */
  int fd=open(path,O_RDONLY); char c; for(int p=0;p<np;p++){ if(pread(fd,&c,1,(off_t)per*p+per-1)!=1||c!=p+1){printf("BAD\n");} } close(fd); unlink(path);
  printf("%-6s np %d %3zu MiB/rank: mean %.0f MB/s best %.0f MB/s\n",meth,np,per>>20,sum/reps,per*np/best/1e6);
  return 0;}
